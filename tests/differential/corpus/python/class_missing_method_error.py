class Report:
    def __init__(self, rows):
        self.rows = rows

    def total(self):
        return sum(r["amount"] for r in self.rows)


report = Report([{"amount": 3}, {"amount": 4}])
print(report.total())
print(report.totl())
