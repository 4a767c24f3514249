sales = {"Q1": 1234567.891, "Q2": 987654.321, "Q3": 0.5, "Q4": -4321.0}
total = sum(sales.values())
for q, v in sales.items():
    share = v / total
    print(f"{q}: {v:>15,.2f}  {share:>7.2%}  {'+' if v >= 0 else '-'}")
print(f"{'TOTAL':<3} {total:>14,.2f}")
