from datetime import datetime, timedelta, timezone

tz = timezone(timedelta(hours=5, minutes=30), "IST")
moment = datetime(2024, 1, 1, 12, 0, tzinfo=tz)
print(moment, moment.astimezone(timezone.utc), moment.utcoffset())
