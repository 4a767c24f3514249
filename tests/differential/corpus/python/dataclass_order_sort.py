from dataclasses import dataclass


@dataclass(order=True)
class Task:
    priority: int
    name: str


tasks = [Task(3, "write"), Task(1, "plan"), Task(2, "review"), Task(1, "design")]
for t in sorted(tasks):
    print(t.priority, t.name)
