print("never runs")
data = [1, 2,
print(data)
