from itertools import accumulate, chain, combinations, groupby, permutations, product

print(list(combinations("abc", 2)))
print(len(list(permutations(range(4)))))
print(list(product([0, 1], repeat=2)))
print(list(accumulate([1, 2, 3, 4])))
print(list(chain.from_iterable([[1], [2, 3]])))
for key, group in groupby("aaabccdd"):
    print(key, len(list(group)))
