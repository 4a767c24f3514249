try:
    await fail("bad input")
except BindingError as e:
    return [e.type, e.message, e.code, e.binding]
