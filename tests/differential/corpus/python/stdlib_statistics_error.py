import statistics

print(statistics.mean([]))
