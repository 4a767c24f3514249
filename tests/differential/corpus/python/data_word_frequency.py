text = """It was the best of times, it was the worst of times, it was the age of wisdom,
it was the age of foolishness, it was the epoch of belief"""
freq = {}
for word in text.lower().replace(",", "").split():
    freq[word] = freq.get(word, 0) + 1
top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
for word, n in top:
    print(f"{word:>8}: {'#' * n}")
