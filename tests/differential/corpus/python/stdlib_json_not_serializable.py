import json
from datetime import date

print(json.dumps({"when": date(2024, 1, 2)}))
