import tomllib

doc = tomllib.loads('title = "x"\n[owner]\nname = "ann"\nnums = [1, 2, 3]\n')
print(doc)
