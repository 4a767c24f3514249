def describe(*args, **kwargs):
    print("args:", args)
    print("kwargs:", kwargs)


describe(1, "two", [3], flag=True, name="x")
params = {"a": 1, "b": 2}
describe(*range(3), **params)
