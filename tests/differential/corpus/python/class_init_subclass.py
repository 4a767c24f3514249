class Base:
    kinds = []

    def __init_subclass__(cls, kind=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Base.kinds.append((cls.__name__, kind))


class A(Base, kind="alpha"):
    pass


class B(Base, kind="beta"):
    pass


print(Base.kinds)
