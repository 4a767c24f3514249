"""The Node guest's codec twins give the Python codec's answers."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tether.codec import encode_payload, value_excess
from tether.host.sandbox.paths import GUEST_DIR

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

CASES = [  # (value, value_bytes, envelope_bytes, envelope_items)
    ("x" * 10, 11, 7, 2),
    ("x" * 10, 10, 7, 2),
    ([0] * 2000, 16 * 1024, 7, 2),
    ([0] * 2000, 32 * 1024, 7, 2),
    ({"a": [1, 2, {"b": None}]}, 4, -2, -2),
    ([[0] * 1030], 1 << 20, 0, 0),
]


def _node(script: str, cases: list[object]) -> object:
    assert NODE is not None
    codec = (GUEST_DIR / "node" / "codec.mjs").as_uri()
    out = subprocess.run([NODE, "--input-type=module", "-e", f"import * as codec from '{codec}';\n"
                          + script], input=json.dumps(cases), capture_output=True, text=True,
                         check=True, timeout=60)
    return json.loads(out.stdout)


def test_value_excess_agrees() -> None:
    cases = [(encode_payload({"value": value}).hex(), *rest) for value, *rest in CASES]
    script = """
let text = '';
process.stdin.on('data', (d) => { text += d; });
process.stdin.on('end', () => {
  const out = JSON.parse(text).map(([hex, bytes, envBytes, envItems]) =>
    codec.valueExcess(Buffer.from(hex, 'hex'), bytes, envBytes, envItems));
  process.stdout.write(JSON.stringify(out));
});
"""
    expected = []
    for payload_hex, value_bytes, envelope_bytes, envelope_items in cases:
        excess = value_excess(bytes.fromhex(payload_hex), value_bytes,
                              envelope_bytes=envelope_bytes, envelope_items=envelope_items)
        expected.append(None if excess is None else {"kind": excess.kind, "amount": excess.amount})
    assert _node(script, cases) == expected
    assert any(e is None for e in expected) and any(e is not None for e in expected)


def test_the_state_tables_agree() -> None:
    from tether.codec import TRANSITIONS

    script = """
process.stdout.write(JSON.stringify([...codec.TRANSITIONS]));
"""
    ours = {f"{state.value} {sender.value} {frame_type.name}": target.value
            for (state, sender, frame_type), target in TRANSITIONS.items()}
    assert dict(_node(script, [])) == ours  # type: ignore[call-overload]
