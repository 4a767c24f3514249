from functools import singledispatch


@singledispatch
def render(value):
    return f"object:{value!r}"


@render.register
def _(value: int):
    return f"int:{value}"


@render.register
def _(value: list):
    return "[" + ", ".join(render(v) for v in value) + "]"


print(render(3), render("x"), render([1, "y", [2]]))
