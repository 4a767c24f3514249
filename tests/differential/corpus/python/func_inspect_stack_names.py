import inspect


def caller_name():
    return inspect.stack()[1].function


def outer():
    return caller_name()


print(outer(), caller_name())
print([f.function for f in inspect.stack()])
