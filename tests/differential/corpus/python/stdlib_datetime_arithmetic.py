from datetime import date, datetime, timedelta, timezone

d = date(2024, 2, 28)
print(d + timedelta(days=1), d + timedelta(days=2), d.weekday(), d.isoformat())
dt = datetime(2024, 3, 10, 14, 30, tzinfo=timezone.utc)
print(dt.strftime("%Y-%m-%d %H:%M %Z"), dt.timestamp())
delta = datetime(2024, 12, 25) - datetime(2024, 1, 1)
print(delta.days, delta.total_seconds())
print(datetime.fromisoformat("2024-05-06T07:08:09").replace(year=2025))
