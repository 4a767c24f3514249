import re

print(re.split(r"[;,\s]+", "a, b;c  d"))
print(re.sub(r"\d+", lambda m: str(int(m.group()) * 2), "x1 y22 z333"))
print(re.fullmatch(r"[a-z]+", "abc") is not None, re.fullmatch(r"[a-z]+", "ab1"))
