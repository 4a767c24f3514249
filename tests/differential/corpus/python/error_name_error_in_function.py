def report():
    return f"{totals} items"


report()
