price = float("12,50")
