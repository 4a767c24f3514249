import re

print(re.compile(r"(unclosed"))
