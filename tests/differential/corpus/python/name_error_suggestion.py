import json
print(jsn.dumps({}))
