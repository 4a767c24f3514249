import datetime
return {'rows': [1, {'when': datetime.date(2026, 1, 1)}]}
