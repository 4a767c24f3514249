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


def test_an_error_is_fitted_alike() -> None:
    """R-DONE-7: both guests shorten a program's error to a DONE's budget
    by the same rules (the traceback first, then the message, an ellipsis
    where cut, a code point never split, the type within its bound)."""
    from tether.codec import ProgramError
    from tether.guest.python.shim import fit_error

    long = "é" * 300 + "x"
    cases = [("ValueError", "short", "", 1000), ("ValueError", long, long, 200),
             ("ValueError", long, long, 40), ("E" * 400, long, "tb", 300),
             ("ValueError", "m", long, 120), ("\ud800bad", "x\udfff", "", 100)]
    errors = [{"type": t, "message": m, "traceback": tb} for t, m, tb, _ in cases]
    errors_module = (GUEST_DIR / "node" / "errors.mjs").as_uri()
    script = f"import {{ fitError }} from '{errors_module}';\n" + """
let text = '';
process.stdin.on('data', (d) => { text += d; });
process.stdin.on('end', () => {
  const out = JSON.parse(text).map(([error, budget]) => fitError(error, budget));
  process.stdout.write(JSON.stringify(out));
});
"""
    fitted = [fit_error(ProgramError(t, m, tb), budget) for t, m, tb, budget in cases]
    expected = [{"type": e.type, "message": e.message, "traceback": e.traceback} for e in fitted]
    payload = json.dumps([[error, budget] for error, (*_, budget) in zip(errors, cases,
                                                                        strict=True)])
    assert NODE is not None
    out = subprocess.run([NODE, "--input-type=module", "-e", script], input=payload,
                         capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == expected
    assert any(e != {"type": t, "message": m, "traceback": tb}
               for e, (t, m, tb, _) in zip(expected, cases, strict=True))
