rows = [{"v": 1}, {"v": 2}, {}]
values = [r["v"] for r in rows]
