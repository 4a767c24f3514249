rows = [("apple", 3, 1.5), ("banana", 12, 0.25), ("cherry", 100, 10.0)]
print(f"{'name':<10}{'qty':>5}{'price':>8}")
print("-" * 23)
for name, qty, price in rows:
    print(f"{name:<10}{qty:>5}{price:>8.2f}")
print("=" * 23)
print(f"{'total':<10}{sum(r[1] for r in rows):>5}{sum(r[1] * r[2] for r in rows):>8.2f}")
