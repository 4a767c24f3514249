import csv
import io

raw = "name,age,city\nann,31,oslo\nbob,25,\"new york, ny\"\n"
rows = list(csv.DictReader(io.StringIO(raw)))
print(rows)
out = io.StringIO()
writer = csv.writer(out)
writer.writerow(["id", "note"])
writer.writerow([1, 'says "hi", ok'])
print(out.getvalue(), end="")
