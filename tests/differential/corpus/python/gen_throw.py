def guarded():
    while True:
        try:
            yield "running"
        except ValueError as e:
            print("generator handled", e)
            yield "recovered"


g = guarded()
print(next(g))
print(g.throw(ValueError("bad input")))
print(next(g))
