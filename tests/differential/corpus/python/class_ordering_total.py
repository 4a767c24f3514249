from functools import total_ordering


@total_ordering
class Version:
    def __init__(self, text):
        self.parts = tuple(int(p) for p in text.split("."))

    def __eq__(self, other):
        return self.parts == other.parts

    def __lt__(self, other):
        return self.parts < other.parts

    def __repr__(self):
        return ".".join(map(str, self.parts))


versions = [Version(v) for v in ["1.10.0", "1.2.3", "1.2.10", "0.9"]]
print(sorted(versions), max(versions), Version("1.0") >= Version("0.9"))
