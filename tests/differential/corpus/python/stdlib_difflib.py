import difflib

a = ["apple", "banana", "cherry", "date"]
b = ["apple", "blueberry", "cherry", "dates"]
print("\n".join(difflib.unified_diff(a, b, "old", "new", lineterm="")))
print(difflib.get_close_matches("appel", ["ape", "apple", "peach", "puppy"]))
print(round(difflib.SequenceMatcher(None, "kitten", "sitting").ratio(), 3))
