import atexit


def goodbye(name):
    print(f"goodbye, {name}")


atexit.register(goodbye, "world")
atexit.register(print, "registered second, runs first")
print("main body")
