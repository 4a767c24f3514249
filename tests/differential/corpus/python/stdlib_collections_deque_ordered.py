from collections import ChainMap, OrderedDict, deque

d = deque(range(5), maxlen=4)
d.append(9)
d.appendleft(-1)
d.rotate(1)
print(d)
od = OrderedDict(a=1, b=2, c=3)
od.move_to_end("a")
print(list(od), od.popitem(last=False))
cm = ChainMap({"x": 1}, {"x": 2, "y": 3})
print(cm["x"], cm["y"], len(cm))
