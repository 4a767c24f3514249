def gen():
    it = iter([])
    yield next(it)


list(gen())
