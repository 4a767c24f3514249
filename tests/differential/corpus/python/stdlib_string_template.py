from string import Template, ascii_lowercase, digits, punctuation

t = Template("Hello $name, you owe $$${amount}")
print(t.substitute(name="Ann", amount=10))
print(t.safe_substitute(name="Bob"))
print(ascii_lowercase[:5], digits, len(punctuation))
print("{0}-{1}-{0}".format("a", "b"), "{name}:{n:03d}".format(name="x", n=7))
