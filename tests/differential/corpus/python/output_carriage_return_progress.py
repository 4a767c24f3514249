for pct in (0, 50, 100):
    print(f"\rprogress {pct:3d}%", end="")
print()
