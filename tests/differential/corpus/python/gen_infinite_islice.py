from itertools import count, islice


def primes():
    found = []
    for n in count(2):
        if all(n % p for p in found):
            found.append(n)
            yield n


print(list(islice(primes(), 15)))
