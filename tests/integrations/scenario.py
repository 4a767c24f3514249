"""What every integration test plays: two tools the model's program calls
at once, and the two programs the scripted models write."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

#: Calls both tools concurrently and computes with the results.
CONCURRENT = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
print("sky:", weather["sky"])
return {"temp": weather["temp"], "people": people // 1000}
"""

#: Passes an int where the declaration says str: refused before anything runs.
TYPE_ERROR = 'return await get_population(city=1)\n'

#: What CONCURRENT returns, as the model reads it back.
RETURNED = '{"temp": 6, "people": 709}'


@dataclass
class Tools:
    """The two tools, recording what reaches them. Each waits until both
    have started, so a program that called them one after the other fails
    (with a TimeoutError, after a bound long enough never to matter)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _both: asyncio.Event | None = None
    _started: int = 0

    async def _meet(self) -> None:
        if self._both is None:
            self._both = asyncio.Event()
        self._started += 1
        if self._started >= 2:
            self._both.set()
        await asyncio.wait_for(self._both.wait(), 30)

    async def get_weather(self, city: str) -> dict[str, Any]:
        """The weather now in a city.

        Args:
            city: the city's name
        """
        self.calls.append(("get_weather", {"city": city}))
        await self._meet()
        return {"temp": 6, "sky": "overcast"}

    async def get_population(self, city: str) -> int:
        """How many people live in a city.

        Args:
            city: the city's name
        """
        self.calls.append(("get_population", {"city": city}))
        await self._meet()
        return 709_000

    def functions(self) -> list[Any]:
        return [self.get_weather, self.get_population]


# -- a tool that needs a person's approval ----------------------------------

class Customer(BaseModel):
    id: int
    name: str


#: Calls a tool returning a pydantic model, a sync tool, then one that
#: needs approval, and prints on the way: the approval pauses it between.
APPROVAL = """\
customer = await get_customer(id=7)
print("found", customer["name"])
note = await note_for(name=customer["name"])
done = await refund(customer_id=customer["id"], amount=5)
print("refund:", done)
return [note, done]
"""


@dataclass
class Shop:
    """The three tools of APPROVAL, recording their calls."""

    calls: list[str] = field(default_factory=list)

    async def get_customer(self, id: int) -> Customer:
        """The customer with this id.

        Args:
            id: the customer's id
        """
        self.calls.append("get_customer")
        return Customer(id=id, name="Ada")

    def note_for(self, name: str) -> str:
        """A note to send to a customer.

        Args:
            name: the customer's name
        """
        self.calls.append("note_for")
        return f"Dear {name}"

    async def refund(self, customer_id: int, amount: int) -> str:
        """Refund a customer (needs a person's approval).

        Args:
            customer_id: the customer's id
            amount: how much to refund
        """
        self.calls.append("refund")
        return f"refunded {amount} to {customer_id}"
