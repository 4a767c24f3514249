import json
from enum import Enum


class Status(str, Enum):
    OK = "ok"
    FAIL = "fail"


print(json.dumps({"status": Status.OK}), Status("fail").name)
