import traceback


def fail():
    raise ValueError("inner failure")


try:
    fail()
except ValueError:
    traceback.print_exc()
print("continued")
