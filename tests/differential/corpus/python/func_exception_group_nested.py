def validate(records):
    problems = []
    for i, r in enumerate(records):
        if "id" not in r:
            problems.append(KeyError(f"record {i} has no id"))
        elif not isinstance(r["id"], int):
            problems.append(TypeError(f"record {i} id is not int"))
    if problems:
        raise ExceptionGroup("invalid records", problems)


try:
    validate([{"id": 1}, {}, {"id": "x"}])
except* KeyError as eg:
    print("key errors:", [str(e) for e in eg.exceptions])
except* TypeError as eg:
    print("type errors:", [str(e) for e in eg.exceptions])
validate([{}, {"id": 2.5}])
