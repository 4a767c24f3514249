"""The constants the Node guest keeps of its own are those of the Python
guest and the codec: each side reads its own, and this holds them equal."""

from __future__ import annotations

import importlib
import re

from tether.host.sandbox.paths import GUEST_DIR

#: Where the Python side keeps what the Node guest mirrors.
PYTHON_SIDE = ("tether.guest.python.shim", "tether.codec.header", "tether.codec.frames",
               "tether.codec.messages", "tether.codec.values", "tether.codec.connection")
#: Those that must be found on both sides (a name changed on one side would
#: otherwise drop out of the comparison).
MIRRORED = {"DONE_ENVELOPE", "MAX_ERROR_TYPE_BYTES", "ENVELOPE_OVERHEAD", "ENVELOPE_DEPTH",
            "ENVELOPE_ITEMS", "MAX_VARIABLES_BYTES", "BYTES_PER_ITEM", "MIN_VALUE_ITEMS",
            "DEFAULT_MAX_FRAME_BYTES", "DEFAULT_MAX_DEPTH", "DEFAULT_VALUE_BYTES",
            "MIN_MAX_FRAME_BYTES", "MIN_MAX_DEPTH", "MAX_MAX_DEPTH", "MAX_PAYLOAD_LENGTH",
            "MAX_CALL_ID", "HEADER_SIZE", "PROTOCOL_VERSION"}
#: ``const NAME = 64 * 1024;`` and the like: whole numbers written as arithmetic.
_CONSTANT = re.compile(r"^(?:export )?const ([A-Z][A-Z0-9_]+) = ([0-9][0-9 *+\-_xa-fA-F]*);", re.M)


def _node_constants() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted((GUEST_DIR / "node").glob("*.mjs")):
        for name, expression in _CONSTANT.findall(path.read_text()):
            found[name] = eval(expression, {"__builtins__": {}})
    return found


def test_the_node_guest_mirrors_the_python_sides_constants() -> None:
    modules = [importlib.import_module(name) for name in PYTHON_SIDE]
    node = _node_constants()
    python = {name: getattr(module, name) for name in node for module in modules
              if hasattr(module, name)}
    assert set(python) >= MIRRORED, "mirrored constants one side no longer has"
    assert {name: node[name] for name in python} == python
