from typing import Protocol, TypedDict, runtime_checkable


class Movie(TypedDict):
    title: str
    year: int


@runtime_checkable
class Closeable(Protocol):
    def close(self) -> None: ...


class File:
    def close(self) -> None:
        print("closed")


m: Movie = {"title": "Alien", "year": 1979}
print(m, Movie.__required_keys__ == {"title", "year"})
f = File()
print(isinstance(f, Closeable))
f.close()
