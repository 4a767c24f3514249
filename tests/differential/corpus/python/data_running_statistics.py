values = [12, 15, 11, 19, 22, 14, 18, 25, 13]
window = 3
moving = [round(sum(values[i:i + window]) / window, 2) for i in range(len(values) - window + 1)]
print("moving average:", moving)
mean = sum(values) / len(values)
var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
print(f"mean={mean:.3f} sd={var ** 0.5:.3f} min={min(values)} max={max(values)}")
outliers = [v for v in values if abs(v - mean) > 1.5 * var ** 0.5]
print("outliers:", outliers)
