"""A guest on its own, for a machine or image that is not the host's::

    python -m tether.guest --stdio                        # CPython programs
    python -m tether.guest --stdio --language javascript  # JavaScript, TypeScript

Frames travel on stdin and stdout with ``--stdio`` (or
``TETHER_TRANSPORT=stdio``, spec §3.1), else on fd 3. A plain
``pip install tether`` in the image is all it needs: the CPython guest loads
tether's codec and cbor2, never the host or construct; the Node guest is the
one the wheel carries (node_modules included), run by ``node`` from PATH (or
``TETHER_NODE``). Programs see the interpreter's own ``sys.path``, so the
image's installed packages are importable; the image, not the host, is the
sandbox (docs/security.md, "Remote guests").
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import sys
from pathlib import Path

GUEST_DIR = Path(__file__).resolve().parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tether.guest",
                                     description="Run one tether guest (one program).")
    parser.add_argument("--stdio", action="store_true",
                        help="frames on stdin/stdout (spec §3.1), as TETHER_TRANSPORT=stdio")
    parser.add_argument("--language", choices=("python", "javascript", "typescript"),
                        default="python", help="python (default); javascript or typescript "
                                               "run the Node guest")
    parser.add_argument("--cwd", help="run the program in this directory (default: here)")
    parser.add_argument("--warm", action="store_true",
                        help="load what programs need before RUN (a guest that waits in a pool)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.stdio:
        os.environ["TETHER_TRANSPORT"] = "stdio"
    options = (["--cwd", args.cwd] if args.cwd else []) + (["--warm"] if args.warm else [])
    if args.language == "python":
        sys.argv = [str(GUEST_DIR / "python" / "main.py"), *options]
        runpy.run_path(sys.argv[0], run_name="__main__")
        return
    node = os.environ.get("TETHER_NODE") or shutil.which("node")
    if node is None:
        sys.stderr.write("tether-guest: JavaScript and TypeScript need Node.js >= 20 on PATH "
                         "(or TETHER_NODE)\n")
        sys.exit(2)
    sys.stdout.flush()
    os.execv(node, [node, "--disable-warning=ExperimentalWarning",
                    str(GUEST_DIR / "node" / "main.mjs"), *options])


if __name__ == "__main__":
    main()
