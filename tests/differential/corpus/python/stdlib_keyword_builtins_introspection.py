import builtins
import keyword

print(keyword.iskeyword("lambda"), keyword.iskeyword("match"), keyword.issoftkeyword("match"))
print("print" in dir(builtins), len(keyword.kwlist) > 30)
print(type(len), type(print).__name__, len.__name__)
