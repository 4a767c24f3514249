def f():
print("not indented")
