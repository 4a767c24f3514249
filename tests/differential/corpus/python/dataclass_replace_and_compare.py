from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Settings:
    theme: str
    font_size: int


base = Settings("dark", 12)
bigger = replace(base, font_size=14)
print(base, bigger, base == bigger, bigger.font_size - base.font_size)
