namespace = {}
exec("def double(x):\n    return 2 * x\nresult = double(21)", namespace)
print(namespace["result"], eval("double(5)", namespace))
print(eval("1 + 2 * 3"))
x = 5
exec("y = x * 2")
print(y)
