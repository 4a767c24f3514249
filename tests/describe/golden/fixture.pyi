from typing import Any, Literal, NotRequired, TypedDict

class Hit(TypedDict):
    id: int
    title: str
    tags: NotRequired[list[str]]

class Point(TypedDict):
    x: int
    y: int

class Box(TypedDict):
    corner: Point
    label: NotRequired[str | None]

class GetWeatherResult(TypedDict):
    celsius: float
    sky: str

async def search(query: str, limit: int = 3, *, exact: bool = False) -> list[Hit]:
    """Documents that mention ``query``.

    Args:
        query: words to look for
        limit: at most this many hits
        exact: match whole words only
    """
    ...

async def paint(
    box: Box,
    sky: Literal['clear', 'rain'],
    mode: Literal['fill', 'stroke'] = 'fill',
    data: bytes | None = None,
    scores: dict[str, float] | None = None,
) -> None:
    """Paint a box."""
    ...

async def total(*values: float) -> float:
    """The sum of ``values``."""
    ...

async def anything(value: Any, /) -> Any: ...

async def get_weather(
    *,
    city: str,
    units: Literal['celsius', 'fahrenheit'] = 'celsius',
    days: int = ...,
) -> GetWeatherResult:
    """Current weather for a city.

    Args:
        city: the city's name
        days: >= 1, <= 7
    """
    ...

async def class_(value: Any, /) -> Any: ...
