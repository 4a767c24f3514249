from contextlib import contextmanager


@contextmanager
def transaction():
    print("begin")
    try:
        yield
        print("commit")
    except Exception:
        print("rollback")
        raise


with transaction():
    print("ok work")
with transaction():
    raise RuntimeError("constraint violated")
