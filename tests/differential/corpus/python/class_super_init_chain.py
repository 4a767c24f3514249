class Base:
    def __init__(self, **kw):
        print("Base got", sorted(kw))


class Logged(Base):
    def __init__(self, name, **kw):
        print("Logged", name)
        super().__init__(**kw)


class Cached(Logged):
    def __init__(self, size, **kw):
        print("Cached", size)
        super().__init__(**kw)


Cached(size=10, name="svc", extra=1)
