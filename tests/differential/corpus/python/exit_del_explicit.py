class Handle:
    def __init__(self, n):
        self.n = n

    def __del__(self):
        print("closing handle", self.n)


h = Handle(1)
del h
print("after del")
Handle(2)
print("after temporary")
