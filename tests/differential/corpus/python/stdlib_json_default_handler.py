import json
from datetime import date, datetime
from decimal import Decimal


def encode(obj):
    if isinstance(obj, (date, datetime)):
        return obj.isoformat()
    if isinstance(obj, Decimal):
        return str(obj)
    raise TypeError(type(obj).__name__)


print(json.dumps({"d": date(2020, 5, 17), "amount": Decimal("10.50")}, default=encode))
