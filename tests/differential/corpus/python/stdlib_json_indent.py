import json

report = {"total": 3, "rows": [{"id": 1, "ok": True}, {"id": 2, "ok": False}]}
print(json.dumps(report, indent=4))
