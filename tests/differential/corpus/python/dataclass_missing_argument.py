from dataclasses import dataclass


@dataclass
class Invoice:
    number: int
    customer: str
    total: float


inv = Invoice(1, "acme")
