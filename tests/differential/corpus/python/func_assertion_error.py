def check(total):
    assert total >= 0, f"total must be non-negative, got {total}"
    return total


check(5)
check(-3)
