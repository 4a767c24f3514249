from graphlib import TopologicalSorter

print(list(TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order()))
