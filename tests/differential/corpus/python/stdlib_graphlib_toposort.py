from graphlib import TopologicalSorter

deps = {"deploy": {"test", "build"}, "test": {"build"}, "build": {"fetch"}}
print(list(TopologicalSorter(deps).static_order()))
