import calendar

print(calendar.month(2024, 2))
print(calendar.isleap(2024), calendar.monthrange(2023, 2), calendar.day_name[0])
