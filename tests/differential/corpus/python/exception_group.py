def check(values):
    errors = [ValueError(f"bad {v}") for v in values if v < 0]
    if errors:
        raise ExceptionGroup("validation failed", errors)
check([1, -2, 3, -4])
