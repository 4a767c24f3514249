import re

raw = "  John SMITH, age: 42 ; Jane doe, age:35;bob JONES,age : 29  "
people = []
for chunk in raw.split(";"):
    name, age = chunk.split(",")
    people.append((name.strip().title(), int(re.sub(r"\D", "", age))))
people.sort(key=lambda p: p[1])
for name, age in people:
    print(f"{name} ({age})")
print("average age:", sum(a for _, a in people) / len(people))
