config = {"db": {"host": "localhost"}}
print(config["db"]["host"])
print(config["db"]["port"])
