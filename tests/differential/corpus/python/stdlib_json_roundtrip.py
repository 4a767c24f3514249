import json

data = {"name": "widget", "sizes": [1, 2.5, None], "active": True, "meta": {"é": "ü"}}
text = json.dumps(data)
print(text)
print(json.dumps(data, ensure_ascii=False, sort_keys=True))
print(json.loads(text) == data)
