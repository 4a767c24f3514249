with open("does_not_exist.json") as f:
    print(f.read())
