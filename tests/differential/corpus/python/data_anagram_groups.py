from collections import defaultdict

words = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act", "tac", "dog"]
groups = defaultdict(list)
for w in words:
    groups["".join(sorted(w))].append(w)
for key in sorted(groups):
    print(key, groups[key])
