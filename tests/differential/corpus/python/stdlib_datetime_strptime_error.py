from datetime import datetime

print(datetime.strptime("2024-01-15", "%Y-%m-%d").date())
print(datetime.strptime("15/01/2024", "%Y-%m-%d"))
