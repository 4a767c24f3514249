"""A data-analysis agent's three steps, each a program in a fresh process,
the state between them carried as values through the host.

    python examples/analysis.py [VENV]

VENV: a virtual environment with pandas (e.g. ``python -m venv /tmp/pd &&
/tmp/pd/bin/pip install pandas``). With it the programs compute with pandas,
preloaded in the fork server's template; without it, with the standard
library. The programs stand in for what a model would write at each step.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from tether import Runtime

SALES = [
    {"region": "north", "month": "2024-01", "units": 120, "price": 9.5},
    {"region": "north", "month": "2024-02", "units": 135, "price": 9.5},
    {"region": "south", "month": "2024-01", "units": 80, "price": 11.0},
    {"region": "south", "month": "2024-02", "units": 95, "price": 10.5},
    {"region": "west", "month": "2024-01", "units": 60, "price": 12.0},
    {"region": "west", "month": "2024-02", "units": 40, "price": 12.0},
]


def load_sales(table: str) -> list[dict[str, Any]]:
    """The host's data, reached only through this binding."""
    if table != "sales":
        raise KeyError(f"no table {table!r}")
    return SALES


# Step 1: load the data. `rows` outlives the process as a value.
LOAD = """
rows = await load_sales("sales")
print(f"loaded {len(rows)} rows with columns {sorted(rows[0])}")
"""

# Step 2: compute revenue by region (pandas where the host offers it).
COMPUTE_PANDAS = """
import pandas as pd
frame = pd.DataFrame(rows)
frame["revenue"] = frame["units"] * frame["price"]
by_region = frame.groupby("region")["revenue"].sum().round(2).to_dict()
print(frame.groupby("region")["revenue"].sum())
"""
COMPUTE_STDLIB = """
from collections import defaultdict
totals = defaultdict(float)
for row in rows:
    totals[row["region"]] += row["units"] * row["price"]
by_region = {region: round(total, 2) for region, total in sorted(totals.items())}
print(by_region)
"""

# Step 3: summarise; the last expression is the result.
SUMMARISE = """
best = max(by_region, key=by_region.get)
share = by_region[best] / sum(by_region.values())
f"{best} leads with {by_region[best]:.2f} ({share:.0%} of revenue)"
"""


async def main(venv: str | None) -> str:
    preload = ("pandas",) if venv else ()
    async with Runtime(python_packages=venv, preload=preload) as rt:
        async with rt.session(bindings={"load_sales": load_sales},
                              last_expression=True) as session:
            for step in (LOAD, COMPUTE_PANDAS if venv else COMPUTE_STDLIB, SUMMARISE):
                result = await session.run(step)
                print(result.output, end="")
                for name, why in result.dropped_variables.items():
                    print(f"  (not carried on: {name}: {why})")
                if not result.ok:
                    assert result.error is not None
                    raise SystemExit(f"step failed: {result.error.traceback}")
            print("carried between steps:", sorted(session.variables))
            summary = result.value
            assert isinstance(summary, str)
            return summary


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None)))
