def f(a, b=2, *args, c, **kw):
    local = a + b
    return local


code = f.__code__
print(code.co_argcount, code.co_kwonlyargcount, code.co_varnames[:3], f.__defaults__, f.__kwdefaults__)
