import functools


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print(f"calling {fn.__name__}{args}")
        result = fn(*args, **kwargs)
        print(f"{fn.__name__} returned {result}")
        return result
    return wrapper


@logged
def add(a, b):
    """Add two numbers."""
    return a + b


add(2, 3)
print(add.__name__, add.__doc__, add.__wrapped__(1, 1))
