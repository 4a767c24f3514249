import gc
import weakref


class Cache:
    pass


obj = Cache()
ref = weakref.ref(obj)
print(ref() is obj)
del obj
gc.collect()
print(ref())
