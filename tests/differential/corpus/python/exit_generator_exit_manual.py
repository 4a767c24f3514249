def g():
    try:
        yield 1
    except GeneratorExit:
        print("generator closing")
        raise


it = g()
next(it)
del it
print("after generator")
