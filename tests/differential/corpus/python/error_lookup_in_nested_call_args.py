def fmt(user):
    return "{name} <{email}>".format(**user)


print(fmt({"name": "ann", "email": "a@x"}))
print(fmt({"name": "bob"}))
