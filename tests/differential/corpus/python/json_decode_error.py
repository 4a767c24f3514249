import json
raw = '{"name": "x",}'
print("parsing")
obj = json.loads(raw)
