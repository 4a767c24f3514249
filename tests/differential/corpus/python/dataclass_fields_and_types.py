from dataclasses import dataclass, field, fields


@dataclass
class Config:
    host: str = "localhost"
    port: int = 8080
    debug: bool = False
    paths: list[str] = field(default_factory=lambda: ["/"])


for f in fields(Config):
    print(f.name, f.type, f.default if f.default is not f.default_factory else None)
print(Config(port=9000))
