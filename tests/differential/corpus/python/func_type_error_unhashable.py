cache = {}
key = ["user", 1]
cache[key] = "value"
