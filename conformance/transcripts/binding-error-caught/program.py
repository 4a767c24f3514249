try:
    await fail("bad input")
except BindingError as e:
    return [e.type, e.code]
