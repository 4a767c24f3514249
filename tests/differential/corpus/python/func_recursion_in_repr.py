class Loop:
    def __repr__(self):
        return repr(self)


print(Loop())
