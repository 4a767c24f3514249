import re

LOG = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) (?P<level>[A-Z]+) (?P<msg>.*)$", re.M)
logs = """2024-01-01 INFO started
2024-01-01 ERROR disk full
2024-01-02 WARN slow response"""
for m in LOG.finditer(logs):
    print(m.groupdict())
print(LOG.pattern.count("?P"))
