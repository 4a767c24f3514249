"""The CPython guest: speaks the tether protocol on fd 3 and runs one program.

Started by the host as::

    python -I -S -B .../guest/python/main.py --cwd DIR [--warm] [--path DIR]...
        [--packages DIR] [--preload MODULE]... [CONFINE]
    python -I -S -B .../guest/python/main.py --zygote namespaces|process [--path DIR]...
        [--packages DIR] [--preload MODULE]... [CONFINE]

``--path`` entries are where ``tether`` and ``cbor2`` live (``-S`` leaves
site-packages off ``sys.path``); they are removed again before the program
runs, so the program sees the standard library only, and the site-packages
directory of ``--packages`` when one is given (its ``.pth`` files applied).
``--warm`` (a guest that waits in a pool) loads asyncio before RUN instead
of only for programs that import it, and imports the ``--preload`` modules;
the fork server imports them in its template. CONFINE are
guest/python/confine.py's options: the guest applies them before it says
HELLO; the fork server, to every guest it forks.
"""

from __future__ import annotations

import os
import sys


def _values(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag]


def _bootstrap() -> None:
    args = sys.argv[1:]
    transport = os.environ.get("TETHER_TRANSPORT", "") or "fd3"  # R-STDIO-4
    if transport not in ("fd3", "stdio") or (transport == "stdio" and "--zygote" in args):
        sys.stderr.write(f"tether-python: transport {transport!r} is not supported here "
                         "(fd3; stdio except with --zygote)\n")
        sys.exit(2)
    paths = _values(args, "--path")
    sys.path[:0] = paths
    try:
        from tether.guest.python import confine, shim

        if "--zygote" in args:
            from tether.guest.python import zygote
    finally:
        del sys.path[: len(paths)]
    del sys.argv[1:]
    confinement = confine.parse(args)
    for packages in _values(args, "--packages"):
        import site

        site.addsitedir(packages)  # after tether's own paths are gone
    preload = _values(args, "--preload")
    if "--zygote" in args:
        zygote.main(args[args.index("--zygote") + 1] == "namespaces", confinement, preload,
                    _values(args, "--packages"))
    if "--warm" in args:
        shim.preload(preload)
    cwd = args[args.index("--cwd") + 1] if "--cwd" in args else None
    confine.apply(confinement, cwd)
    shim.main(cwd, warm="--warm" in args, stdio=transport == "stdio")


if __name__ == "__main__":
    _bootstrap()
