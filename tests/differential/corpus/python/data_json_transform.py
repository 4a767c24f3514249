import json

payload = json.loads("""
{"users": [
  {"id": 1, "name": "Ann", "tags": ["admin"], "active": true},
  {"id": 2, "name": "Bob", "tags": [], "active": false},
  {"id": 3, "name": "Cid", "tags": ["dev", "ops"], "active": true}
]}""")
active = [u for u in payload["users"] if u["active"]]
summary = {
    "active_count": len(active),
    "names": [u["name"] for u in active],
    "tag_counts": {u["name"]: len(u["tags"]) for u in payload["users"]},
}
print(json.dumps(summary, indent=2, sort_keys=True))
