from typing import Generic, TypeVar

T = TypeVar("T")


class Stack(Generic[T]):
    def __init__(self) -> None:
        self.items: list[T] = []

    def push(self, item: T) -> None:
        self.items.append(item)

    def pop(self) -> T:
        return self.items.pop()


s: Stack[int] = Stack()
for i in range(3):
    s.push(i)
print(s.pop(), s.items, Stack[int])
