def handle(command):
    match command.split():
        case ["go", direction]:
            return f"going {direction}"
        case ["take", *items] if items:
            return f"taking {', '.join(items)}"
        case ["quit"] | ["exit"]:
            return "bye"
        case _:
            return f"unknown: {command!r}"


for cmd in ["go north", "take lamp key", "quit", "dance"]:
    print(handle(cmd))
