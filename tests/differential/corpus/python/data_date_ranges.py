from datetime import date, timedelta

start = date(2024, 1, 29)
days = [start + timedelta(days=i) for i in range(7)]
for d in days:
    print(d.isoformat(), d.strftime("%a"), "weekend" if d.weekday() >= 5 else "")
months = sorted({d.strftime("%B") for d in days})
print(months)
