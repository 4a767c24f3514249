def parse(lines):
    for line in lines:
        key, value = line.split("=")
        yield key, value


config = dict(parse(["a=1", "b=2", "broken"]))
