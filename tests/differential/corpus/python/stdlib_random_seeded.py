import random

random.seed(42)
print(random.randint(1, 100), random.random(), random.choice("abcdef"))
items = list(range(10))
random.shuffle(items)
print(items, random.sample(range(100), 5))
rng = random.Random(7)
print(rng.uniform(0, 1), rng.gauss(0, 1), rng.choices("xyz", k=5))
