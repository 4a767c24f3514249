from abc import ABC, abstractmethod


class Base(ABC):
    @abstractmethod
    def run(self): ...

    @abstractmethod
    def stop(self): ...


class Partial(Base):
    def run(self):
        return 1


Partial()
