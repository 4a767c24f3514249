from typing import Any, Callable, Literal, Optional, Union, get_args, get_origin

Handler = Callable[[int], str]
print(get_origin(list[int]), get_args(dict[str, int]), get_args(Union[int, str]))
print(Optional[int], Literal["a", "b"], Any)


def apply(h: Handler, x: int) -> str:
    return h(x)


print(apply(str, 5))
