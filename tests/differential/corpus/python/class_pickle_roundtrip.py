import pickle


class Record:
    def __init__(self, key, values):
        self.key = key
        self.values = values

    def __eq__(self, other):
        return vars(self) == vars(other)


original = Record("k1", [1, 2, 3])
copy = pickle.loads(pickle.dumps(original))
print(copy == original, copy.key, copy.values, type(copy).__module__)
