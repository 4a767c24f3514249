import json

data = {"a": 1}


def ok():
    return data


def broken():
    return [x for x in range(3) if x >]
