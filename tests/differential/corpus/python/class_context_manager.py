class Timer:
    def __enter__(self):
        print("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        print("exit with", exc_type)
        return exc_type is KeyError


with Timer():
    print("body")
with Timer():
    {}["missing"]
print("suppressed KeyError")
