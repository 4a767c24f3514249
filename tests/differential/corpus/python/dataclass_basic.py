from dataclasses import dataclass, field


@dataclass
class Product:
    name: str
    price: float
    tags: list[str] = field(default_factory=list)


p = Product("lamp", 19.99)
p.tags.append("home")
print(p)
print(p == Product("lamp", 19.99, ["home"]))
