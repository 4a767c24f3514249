class Outer:
    class Inner:
        def method(self):
            return 1

    def make(self):
        def helper():
            return 2
        return helper


print(Outer.Inner.__qualname__, Outer.Inner.method.__qualname__)
print(Outer().make().__qualname__)
print((lambda: 0).__qualname__, (x for x in ()).__qualname__.split(".")[-1])
