import datetime
try:
    await add(1, {'a b': [datetime.date(2026, 1, 1)]})
except TypeError as e:
    return [type(e).__name__, str(e).split(': ')[:2]]
