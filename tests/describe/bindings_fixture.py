"""A fixed set of bindings covering every schema feature, for the golden text."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal, NotRequired

from pydantic import BaseModel
from typing_extensions import TypedDict

from tether import Binding


class Sky(enum.Enum):
    CLEAR = "clear"
    RAIN = "rain"


class Hit(TypedDict):
    id: int
    title: str
    tags: NotRequired[list[str]]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Box(BaseModel):
    corner: Point
    label: str | None = None


async def search(query: str, limit: int = 3, *, exact: bool = False) -> list[Hit]:
    """Documents that mention ``query``.

    Args:
        query: words to look for
        limit: at most this many hits
        exact: match whole words only
    """
    return []


async def paint(box: Box, sky: Sky, mode: Literal["fill", "stroke"] = "fill",
                data: bytes | None = None, scores: dict[str, float] | None = None) -> None:
    """Paint a box."""


def total(*values: float) -> float:
    """The sum of ``values``."""
    return sum(values)


def anything(value: Any, /) -> Any:
    return value


WEATHER = Binding(
    name="get-weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {
        "city": {"type": "string", "description": "the city's name"},
        "units": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    }, "required": ["city"]},
    result={"type": "object", "properties": {"celsius": {"type": "number"},
                                             "sky": {"type": "string"}},
            "required": ["celsius", "sky"]},
    function=lambda **kwargs: {"celsius": 18.5, "sky": "clear", **kwargs},
)

BINDINGS: dict[str, Any] = {"search": search, "paint": paint, "total": total,
                            "anything": anything, "get-weather": WEATHER, "class": anything}
