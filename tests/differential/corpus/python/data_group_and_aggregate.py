from collections import defaultdict

orders = [
    {"customer": "acme", "amount": 120.0, "month": "jan"},
    {"customer": "globex", "amount": 75.5, "month": "jan"},
    {"customer": "acme", "amount": 60.25, "month": "feb"},
    {"customer": "initech", "amount": 300.0, "month": "feb"},
    {"customer": "globex", "amount": 20.0, "month": "feb"},
]
by_customer = defaultdict(float)
by_month = defaultdict(list)
for o in orders:
    by_customer[o["customer"]] += o["amount"]
    by_month[o["month"]].append(o["amount"])
for customer, total in sorted(by_customer.items(), key=lambda x: -x[1]):
    print(f"{customer:<8} {total:>8.2f}")
print({m: round(sum(v) / len(v), 2) for m, v in by_month.items()})
