from collections import Counter

words = "the quick brown fox jumps over the lazy dog the end".split()
counts = Counter(words)
print(counts.most_common(3))
print(counts["the"], counts["missing"])
print(Counter("abracadabra").most_common(2))
c = Counter(a=3, b=1) - Counter(a=1, b=2)
print(c, sum(counts.values()))
