def repeat(times):
    def decorate(fn):
        def wrapper(*args):
            return [fn(*args) for _ in range(times)]
        return wrapper
    return decorate


@repeat(3)
def greet(name):
    return f"hi {name}"


print(greet("ann"))
