def resource():
    try:
        yield "a"
        yield "b"
    finally:
        print("generator finalized")


g = resource()
print(next(g))
g.close()
print("after close")
