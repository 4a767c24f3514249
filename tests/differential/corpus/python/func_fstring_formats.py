value = 1234567.891
print(f"{value:,.2f}|{value:>15.1f}|{value:e}|{int(value):_}")
print(f"{0.25:.0%}|{42:08b}|{255:#x}|{'left':<8}|{'right':>8}|{'mid':^9}|")
name = "ann"
print(f"{name=}, {len(name)=}, {name!r:>8}")
print(f"{{literal}} {3 + 4}")
