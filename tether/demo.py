"""A small set of bindings for trying tether out (``--bindings tether.demo:BINDINGS``),
and a program that calls them (``tether run --demo``; examples/demo.py in a checkout)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

_DOCS: list[dict[str, Any]] = [
    {"id": 1, "title": "Programmatic tool calling", "tags": ["agents", "tools"]},
    {"id": 2, "title": "Process groups and signals", "tags": ["unix", "processes"]},
    {"id": 3, "title": "Deterministic CBOR", "tags": ["cbor", "encoding"]},
    {"id": 4, "title": "Sandboxing untrusted code", "tags": ["security", "processes"]},
]

_WEATHER = {"paris": (18, "cloudy"), "tokyo": (24, "sunny"), "oslo": (6, "rain")}


async def search(query: str, limit: int = 3) -> list[dict[str, Any]]:
    """Documents whose title or tags mention ``query`` (case-insensitive)."""
    await asyncio.sleep(0.01)  # pretend to be a network call
    q = query.lower()
    hits = [d for d in _DOCS if q in d["title"].lower() or any(q in t for t in d["tags"])]
    return hits[:limit]


async def weather(city: str) -> dict[str, Any]:
    """Current weather for ``city``; raises KeyError for unknown cities."""
    await asyncio.sleep(0.01)
    try:
        celsius, sky = _WEATHER[city.lower()]
    except KeyError:
        raise KeyError(f"no weather data for {city!r}") from None
    return {"city": city, "celsius": celsius, "sky": sky}


def add(a: float, b: float) -> float:
    """a + b (a synchronous binding: tether runs it in a worker thread)."""
    return a + b


BINDINGS: dict[str, Callable[..., Any]] = {"search": search, "weather": weather, "add": add}


#: The demo program (examples/demo.py): what ``tether run --demo`` runs.
PROGRAM = '''\
# A program as a model might write it: it calls the host's bindings
# (search, weather, add), prints as it goes, and returns a compact answer.
import asyncio

hits = await search("processes")
print(f"{len(hits)} documents about processes:", [h["title"] for h in hits])

cities = ["Paris", "Tokyo", "Atlantis"]
reports = await asyncio.gather(*(weather(c) for c in cities), return_exceptions=True)
for city, report in zip(cities, reports):
    if isinstance(report, BindingError):
        print(f"{city}: unavailable ({report.type})")
    else:
        print(f"{city}: {report['celsius']} °C, {report['sky']}")

known = [r for r in reports if not isinstance(r, BaseException)]
total = 0
for r in known:
    total = await add(total, r["celsius"])
return {"documents": len(hits), "mean_celsius": total / len(known)}
'''
