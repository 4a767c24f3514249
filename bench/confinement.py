"""What the seccomp filter and Landlock cost.

    .venv/bin/python bench/confinement.py [--repeat N]

Installing them in a forked child (what each forked guest does before its
HELLO), compiling the filter (once per Runtime), a system call through the
filter, and whole runs with and without the filter: warm, forked and cold,
in each profile this machine has.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import shutil
import statistics
import subprocess
import time
import warnings
from collections.abc import Callable

from tether import PoolConfig, Runtime, SyscallFilter
from tether.guest.python import confine
from tether.host.sandbox import confinement, seccomp
from tether.host.sandbox.profiles import detect


def _median_us(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1e6:.1f} µs"


def _in_forks(repeat: int, work: Callable[[], None]) -> list[float]:
    """How long ``work`` takes in a freshly forked child, each time anew."""
    samples = []
    for _ in range(repeat):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            start = time.perf_counter()
            work()
            os.write(write, repr(time.perf_counter() - start).encode())
            os._exit(0)
        os.close(write)
        samples.append(float(os.read(read, 64)))
        os.close(read)
        os.waitpid(pid, 0)
    return samples


def _spawned(repeat: int, argv: tuple[str, ...]) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, env={})  # as a guest: nothing of the host
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _syscall_ns(loops: int) -> float:
    libc = ctypes.CDLL(None)
    start = time.perf_counter()
    for _ in range(loops):
        libc.getppid()
    return (time.perf_counter() - start) / loops * 1e9


def micro(repeat: int) -> None:
    bpf = SyscallFilter().bpf()
    start = time.perf_counter()
    seccomp._compile.cache_clear()
    SyscallFilter().bpf()
    compile_s = time.perf_counter() - start
    print(f"filter: {len(bpf) // 8} BPF instructions, compiled in {compile_s * 1e3:.2f} ms")
    both = confine.parse(list(confinement.options(bpf, landlock=True)))
    cases = {"seccomp filter": confine.Confinement(seccomp=bpf),
             "Landlock ruleset": confine.Confinement(read=both.read, write=both.write),
             "both (process profile)": both}
    print(f"installing in a guest forked from a template that prepared it "
          f"(median of {repeat} forks):")
    print(f"  {'nothing (the fork alone)':24}", _median_us(_in_forks(repeat, lambda: None)))
    for name, case in cases.items():
        if case.landlock and not confinement.landlock_version():
            continue
        confine.warm(case)
        print(f"  {name:24}", _median_us(_in_forks(
            repeat, lambda case=case: confine.apply(case, "/tmp"))))
    node = shutil.which("node")
    if node is not None:
        argv = (os.path.realpath(node), "-e", "0")
        launched = confinement.process_argv(argv, "/tmp", bpf, landlock=True,
                                            confines_itself=False)
        direct = _spawned(repeat // 10, argv)
        through = _spawned(repeat // 10, launched)
        print(f"node -e 0 (median of {repeat // 10}): {direct * 1e3:.1f} ms, "
              f"{through * 1e3:.1f} ms through the launcher (process profile)")
    plain = statistics.median(_syscall_ns(100_000) for _ in range(5))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        confine.apply(confine.Confinement(seccomp=bpf), None)
        value = statistics.median(_syscall_ns(100_000) for _ in range(5))
        os.write(write, repr(value).encode())
        os._exit(0)
    os.close(write)
    filtered = float(os.read(read, 64))
    os.close(read)
    os.waitpid(pid, 0)
    print(f"getppid() via ctypes: {plain:.0f} ns unfiltered, {filtered:.0f} ns filtered")


async def runs(repeat: int) -> None:
    profiles = ["process"] + (["namespaces"] if detect().namespaces else [])
    modes = {"warm": PoolConfig(size=1, fork_server=False), "forked": PoolConfig(size=0),
             "cold": None}
    print(f"hello runs, median of {repeat} (filter off -> on):")
    for profile in profiles:
        for mode, pool in modes.items():
            for language in ("python", "javascript"):
                if mode == "forked" and language == "javascript":
                    continue
                medians = []
                for policy in (None, SyscallFilter()):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        runtime = Runtime(sandbox=profile, pool=pool, syscall_filter=policy)
                    async with runtime:
                        source = "return 42"
                        await runtime.run(source, language=language)
                        samples = []
                        for _ in range(repeat):
                            if mode == "warm":
                                await asyncio.sleep(0.15)  # the pool refills
                            start = time.perf_counter()
                            await runtime.run(source, language=language)
                            samples.append(time.perf_counter() - start)
                    medians.append(statistics.median(samples) * 1e3)
                print(f"  {profile:10} {mode:6} {language:10} {medians[0]:6.2f} -> "
                      f"{medians[1]:6.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    micro(args.repeat * 10)
    asyncio.run(runs(args.repeat))


if __name__ == "__main__":
    main()
