s = "naïve 🐍"
print(len(s), len(s.encode("utf-8")), s.encode("utf-8"))
print(s.encode("ascii", errors="replace"), s.encode("ascii", errors="ignore"))
print(ascii(s), repr(s))
