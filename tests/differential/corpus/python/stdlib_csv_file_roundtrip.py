import csv

with open("people.csv", "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=["name", "score"])
    writer.writeheader()
    writer.writerows([{"name": "ann", "score": 9}, {"name": "bob", "score": 7}])
with open("people.csv", newline="") as f:
    for row in csv.DictReader(f):
        print(row["name"], int(row["score"]) * 10)
