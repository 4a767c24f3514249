import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
conn.executemany("INSERT INTO sales VALUES (?, ?)",
                 [("north", 10.5), ("south", 20.0), ("north", 4.5), ("east", 7.0)])
for row in conn.execute("SELECT region, SUM(amount), COUNT(*) FROM sales GROUP BY region ORDER BY region"):
    print(row)
print(conn.execute("SELECT MAX(amount) FROM sales").fetchone()[0])
conn.close()
