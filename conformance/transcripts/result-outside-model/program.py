try:
    await opaque()
except BindingError as e:
    return [e.code, e.binding]
