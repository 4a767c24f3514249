import re

match = re.match(r"(\d+)", "abc")
print(match.group(1))
