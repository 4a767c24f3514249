"""Benchmark of described bindings: what checking a CALL's arguments costs,
and what the check before a run costs, beside a warm run.

    .venv/bin/python bench/describe.py [--repeat N]

Argument checking is measured twice: alone (``ArgumentCheck.check``, per
call) and end to end (100 sequential calls from a warm guest, with the check
and with it replaced by a pass-through). The pre-run check is timed for a
5-line and a 100-line program per language: cold (a new Runtime, so for
TypeScript and JavaScript a new compiler process) and warm.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any, Literal

from typing_extensions import TypedDict

from tether import Binding, Runtime
from tether.host import prepare_bindings
from tether.host.bindings.arguments import ArgumentCheck


async def echo(x: Any) -> Any:
    return x


class Filter(TypedDict):
    tag: str
    limit: int


async def search(query: str, limit: int = 3, *, mode: Literal["any", "all"] = "any",
                 filters: list[Filter] | None = None) -> list[str]:
    return []


WEATHER = Binding("get-weather", "", {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"]}, lambda **kw: kw)

CALLS = {
    "echo(x: Any), one int": ("echo", echo, [1], {}),
    "search(str, int, Literal, list[TypedDict])": (
        "search", search, ["cbor", 5], {"mode": "all", "filters": [{"tag": "a", "limit": 1}]}),
    "explicit JSON Schema (city, days)": ("get-weather", WEATHER, [], {"city": "Oslo", "days": 2}),
}

PROGRAMS = {
    "python": ("x = await search('cbor', 3)\ny = [h.upper() for h in x]\nprint(y)\n"
               "z = len(y)\nreturn z\n",
               "".join(f"v{i} = await search('q{i}', {i % 5 + 1})\nprint(len(v{i}))\n"
                       for i in range(50))),
    "typescript": ("const x = await search('cbor', 3);\nconst y = x.map((h) => h.toUpperCase());\n"
                   "console.log(y);\nconst z: number = y.length;\nreturn z;\n",
                   "".join(f"const v{i} = await search('q{i}', {i % 5 + 1});\n"
                           f"console.log(v{i}.length);\n" for i in range(50))),
    "javascript": ("const x = await search('cbor', 3);\nconst y = x.map((h) => h.toUpperCase());\n"
                   "console.log(y);\nconst z = y.length;\nreturn z;\n",
                   "".join(f"const v{i} = await search('q{i}', {i % 5 + 1});\n"
                           f"console.log(v{i}.length);\n" for i in range(50))),
}

SEQUENTIAL = {
    "python": "x = 0\nfor i in range(100):\n    x = await echo(i)\nreturn x",
    "javascript": "let x = 0\nfor (let i = 0; i < 100; i++) x = await echo(i)\nreturn x",
}


def per_call(repeat: int) -> None:
    print("argument check alone, per call (median of", repeat, "x 10,000):")
    for label, (name, binding, args, kwargs) in CALLS.items():
        check = ArgumentCheck(next(iter(prepare_bindings({name: binding}).values())).description)
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(10_000):
                check.check(args, kwargs)
            samples.append((time.perf_counter() - start) / 10_000)
        print(f"  {label:45} {statistics.median(samples) * 1e6:6.2f} µs")


async def sequential(repeat: int) -> None:
    print("100 sequential calls, warm guest (median ms), with and without the argument check:")
    def identity(self: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return args, kwargs

    real = ArgumentCheck.check
    async with Runtime() as rt:
        for language, source in SEQUENTIAL.items():
            row = []
            for patched in (False, True):
                ArgumentCheck.check = identity if patched else real  # type: ignore[method-assign]
                samples = []
                for _ in range(repeat):
                    await asyncio.sleep(0.15)  # the pool refills, as between an agent's steps
                    start = time.perf_counter()
                    result = await rt.run(source, language=language, bindings={"echo": echo})
                    samples.append(time.perf_counter() - start)
                    assert result.ok, result.error
                row.append(statistics.median(samples) * 1000)
            ArgumentCheck.check = real  # type: ignore[method-assign]
            print(f"  {language:12} checked {row[0]:6.2f}   unchecked {row[1]:6.2f}   "
                  f"per call {(row[0] - row[1]) * 10:+.1f} µs")


async def checks(repeat: int) -> None:
    print("check before a run (ms; cold = first check of a new Runtime, warm = median after):")
    bindings = {"search": search}
    for language, (short, long) in PROGRAMS.items():
        for label, source in (("5 lines", short), ("100 lines", long)):
            async with Runtime() as rt:
                start = time.perf_counter()
                found = await rt.check(source, language=language, bindings=bindings)
                cold = time.perf_counter() - start
                assert found == (), found
                samples = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    await rt.check(source, language=language, bindings=bindings)
                    samples.append(time.perf_counter() - start)
                runs = []
                for _ in range(repeat):
                    await asyncio.sleep(0.15)
                    start = time.perf_counter()
                    await rt.run(source, language=language, bindings=bindings)
                    runs.append(time.perf_counter() - start)
            print(f"  {language:10} {label:9} cold {cold * 1000:7.1f}   warm "
                  f"{statistics.median(samples) * 1000:6.1f}   (a warm run of it: "
                  f"{statistics.median(runs) * 1000:5.1f})")


def python_checkers(repeat: int) -> None:
    """ty against the alternatives, on the same stubs and wrapped programs:
    each one's command, fresh process each time; mypy also warm (its cache,
    and its daemon). Checkers that are not installed are skipped."""
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from ty import find_ty_bin

    from tether.guest.python import check
    from tether.host import describe_bindings
    from tether.host.check import python as check_python

    print("Python checkers, per check (median ms, fresh process unless said):")
    bin_dir = Path(sys.executable).parent
    commands = {
        "ty": [find_ty_bin(), "check", "--output-format", "concise", "program.py"],
        "mypy (no cache)": [sys.executable, "-m", "mypy", "--no-incremental", "program.py"],
        "mypy (warm cache)": [sys.executable, "-m", "mypy", "program.py"],
        "dmypy (warm daemon)": [str(bin_dir / "dmypy"), "run", "--", "program.py"],
        "basedpyright": [str(bin_dir / "basedpyright"), "program.py"],
    }
    stubs, _ = check_python.stubs(describe_bindings({"search": search}))
    for name, command in commands.items():
        if not shutil.which(command[0]) and not Path(command[0]).exists():
            continue
        row = []
        for source in PROGRAMS["python"]:
            with tempfile.TemporaryDirectory() as scratch:
                (Path(scratch) / "__tether_bindings__.pyi").write_text(stubs)
                (Path(scratch) / "program.py").write_text(check.wrap(source))
                subprocess.run(command, cwd=scratch, capture_output=True, check=False)  # warm-up
                samples = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    subprocess.run(command, cwd=scratch, capture_output=True, check=False)
                    samples.append(time.perf_counter() - start)
                if name.startswith("dmypy"):
                    subprocess.run([command[0], "stop"], cwd=scratch, capture_output=True,
                                   check=False)
            row.append(statistics.median(samples) * 1000)
        print(f"  {name:22} 5 lines {row[0]:7.1f}   100 lines {row[1]:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--checkers", action="store_true",
                        help="also compare ty with mypy, dmypy and basedpyright")
    args = parser.parse_args()
    per_call(args.repeat)
    asyncio.run(sequential(args.repeat))
    asyncio.run(checks(args.repeat))
    if args.checkers:
        python_checkers(args.repeat)


if __name__ == "__main__":
    main()
