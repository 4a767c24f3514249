from dataclasses import KW_ONLY, dataclass


@dataclass(slots=True)
class Event:
    name: str
    _: KW_ONLY
    level: int = 0
    source: str = "app"


e = Event("start", level=2)
print(e, hasattr(e, "__dict__"))
print(Event("stop", source="cli"))
