from typing import Any, Literal, NotRequired, TypedDict

async def search(query: str, limit: int = 3) -> list[dict[str, Any]]:
    """Documents whose title or tags mention ``query`` (case-insensitive)."""
    ...

async def weather(city: str) -> dict[str, Any]:
    """Current weather for ``city``; raises KeyError for unknown cities."""
    ...

async def add(a: float, b: float) -> float:
    """a + b (a synchronous binding: tether runs it in a worker thread)."""
    ...
