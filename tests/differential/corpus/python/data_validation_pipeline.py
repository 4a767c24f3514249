def validate(record):
    errors = []
    if not record.get("name"):
        errors.append("name is required")
    if not isinstance(record.get("age"), int) or not 0 <= record["age"] <= 150:
        errors.append("age must be an integer in [0, 150]")
    if "@" not in record.get("email", ""):
        errors.append("email is invalid")
    return errors


records = [
    {"name": "Ann", "age": 31, "email": "ann@x.org"},
    {"name": "", "age": 200, "email": "nope"},
    {"age": "12"},
]
for i, r in enumerate(records):
    problems = validate(r)
    print(i, "ok" if not problems else "; ".join(problems))
