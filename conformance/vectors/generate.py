"""Writes frames.json (the codec test vectors) and the spec's Appendix A.

    python conformance/vectors/generate.py          # rewrite both files
    python conformance/vectors/generate.py --check  # fail if either is stale

Each vector is a byte string a receiver is fed, with the outcome the spec
requires: the message it decodes to (its type, and its content in diagnostic
notation, maps in the order sent), a connection error code, or a discard.
Valid payloads are encoded here with cbor2 and a shortest-float encoder of
their own (preferred serialization, maps in their order: R-CBOR-2), not with
the codecs they check; invalid ones are spelled out in hex so that no encoder
can "fix" them.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

import cbor2
import cbor_diag

from tether.conformance.transcript import diag

HERE = Path(__file__).resolve().parent
VECTORS = HERE / "frames.json"
APPENDIX = HERE.parents[1] / "spec" / "appendix-a-vectors.md"

TYPES = {"HELLO": 1, "RUN": 2, "CALL": 3, "RESULT": 4, "OUTPUT": 5, "DONE": 6, "CANCEL": 7,
         "ERROR": 8}
MIN_CEILING = 65536
LIMITS = {"output_bytes": 1048576, "value_bytes": 8388608, "frame_bytes": 16777216,
          "max_depth": 64, "max_calls_in_flight": 64}


def header(frame_type: int, length: int, *, magic: bytes = b"TH", version: int = 1,
           flags: int = 0) -> bytes:
    return struct.pack(">2sBBHI", magic, version, frame_type, flags, length)


def frame(frame_type: int | str, payload: bytes) -> bytes:
    t = TYPES[frame_type] if isinstance(frame_type, str) else frame_type
    return header(t, len(payload)) + payload


def _shortest_float(encoder: cbor2.CBOREncoder, value: float) -> None:
    if math.isnan(value):
        encoder.write(b"\xf9\x7e\x00")
        return
    for head, layout in ((b"\xf9", ">e"), (b"\xfa", ">f"), (b"\xfb", ">d")):
        try:
            data = struct.pack(layout, value)
        except OverflowError:
            continue
        if struct.unpack(layout, data)[0] == value:
            encoder.write(head + data)
            return


def enc(item: Any) -> bytes:
    """Preferred serialization, every map in its own order (R-CBOR-2)."""
    return cbor2.dumps(item, encoders={float: _shortest_float})


vectors: list[dict[str, Any]] = []


def ok(vid: str, reqs: list[str], what: str, frame_type: str, item: Any, **extra: Any) -> None:
    vectors.append({"id": vid, "requirements": reqs, "description": what,
                    "hex": frame(frame_type, enc(item)).hex(),
                    "expect": {"message": frame_type, "decoded": diag(item)}, **extra})


def bad(vid: str, reqs: list[str], what: str, data: bytes, error: str, **extra: Any) -> None:
    vectors.append({"id": vid, "requirements": reqs, "description": what, "hex": data.hex(),
                    "expect": {"error": error}, **extra})


def bad_payload(vid: str, reqs: list[str], what: str, frame_type: str, payload: bytes,
                *, error: str = "MALFORMED_PAYLOAD") -> None:
    bad(vid, reqs, what, frame(frame_type, payload), error)


def build() -> None:
    hello = {"protocol": 1, "implementation": "tether-python/0.1.0", "languages": ["python"],
             "capabilities": []}
    # -- one valid frame of every type ---------------------------------------
    ok("hello", ["R-HELLO-1", "R-HELLO-3"], "guest HELLO", "HELLO", hello)
    ok("hello-capabilities", ["R-HELLO-3", "R-VER-2"], "HELLO offering an extension",
       "HELLO", {**hello, "languages": ["javascript", "typescript"],
                 "capabilities": ["example.stream"]})
    ok("run-minimal", ["R-RUN-1", "R-RUN-2"], "RUN with no bindings", "RUN",
       {"source": "return 42", "language": "python", "bindings": [], "limits": LIMITS})
    ok("run-bindings", ["R-RUN-3", "R-RUN-4"],
       "RUN with documented bindings and resource limits", "RUN",
       {"source": "return await add(1, 2)", "language": "python",
        "bindings": [{"name": "add", "signature": "(a: int, b: int) -> int",
                      "doc": "Add two integers."}, {"name": "search"}],
        "limits": {**LIMITS, "memory_bytes": 1 << 30, "cpu_seconds": 31, "open_files": 256,
                   "file_bytes": 1 << 26}})
    ok("call", ["R-CALL-1", "R-CALL-2"], "CALL with positional and keyword arguments", "CALL",
       {"id": 1, "name": "search", "args": ["tether"], "kwargs": {"limit": 10}})
    ok("call-values", ["R-CBOR-2", "R-CBOR-3", "R-CBOR-5", "R-VAL-1"],
       "every kind of value, each in its shortest encoding", "CALL",
       {"id": 9007199254740991, "name": "f",
        "args": [None, True, False, 0, -1, 23, 24, 2**64 - 1, -(2**64), 2**64, -(2**64) - 1,
                 1.5, 0.1, 100000.0, float("inf"), float("-inf"), float("nan"), -0.0,
                 "", "é€😀", b"", b"\x00\xff", [], {}, [[1], {"k": [None]}]],
        "kwargs": {"a b": 1, "z": 2, "aa": 3}})
    ok("result-value", ["R-RESULT-1", "R-RESULT-2"], "RESULT carrying a value", "RESULT",
       {"id": 1, "value": [{"title": "tether", "score": 0.5}]})
    ok("result-error", ["R-RESULT-2", "R-RESULT-3"], "RESULT carrying a binding's error",
       "RESULT", {"id": 2, "error": {"code": 100, "type": "ValueError",
                                      "message": "query must not be empty"}})
    ok("output-stdout", ["R-OUTPUT-1"], "OUTPUT on stdout", "OUTPUT",
       {"stream": "stdout", "text": "hello\n"})
    ok("output-stderr", ["R-OUTPUT-1", "R-OUTPUT-2"], "OUTPUT on stderr with U+FFFD", "OUTPUT",
       {"stream": "stderr", "text": "bad \ufffd\n"})
    ok("done-value", ["R-DONE-1"], "DONE with a null return value", "DONE", {"value": None})
    ok("done-error", ["R-DONE-1", "R-DONE-2"], "DONE with a program error", "DONE",
       {"error": {"type": "ZeroDivisionError", "message": "division by zero", "line": 2,
                  "traceback": 'Traceback (most recent call last):\n  File "<program>", '
                               'line 2, in <module>\n    1 / 0\nZeroDivisionError: '
                               "division by zero\n"}})
    ok("done-error-limit", ["R-DONE-3"], "DONE whose error a limit caused", "DONE",
       {"error": {"type": "ValueError", "message": "return value exceeds value_bytes",
                  "traceback": "", "code": 103}})
    ok("run-variables", ["R-VARS-1", "R-VARS-7"],
       "RUN with variables, their budget, and the last expression as the result", "RUN",
       {"source": "total = sum(rows)\ntotal", "language": "python", "bindings": [],
        "limits": {**LIMITS, "variables_bytes": 4194304},
        "variables": {"rows": [1, 2, 3], "unit": "km"}, "last_expression": True})
    ok("done-variables", ["R-VARS-3", "R-VARS-4"],
       "DONE with the program's variables and one left out", "DONE",
       {"value": 6, "variables": {"rows": [1, 2, 3], "total": 6, "unit": "km"},
        "dropped": {"when": "$: datetime is outside the value model"}})
    ok("done-error-variables", ["R-VARS-3"], "DONE with an error and the variables", "DONE",
       {"error": {"type": "KeyError", "message": "'x'", "traceback": ""},
        "variables": {}, "dropped": {}})
    ok("cancel", ["R-CANCEL-1"], "CANCEL", "CANCEL", {"reason": "timeout"})
    ok("error", ["R-ERR-1"], "ERROR", "ERROR",
       {"code": 4, "message": "declared payload of 4294967295 bytes exceeds the ceiling"})
    vectors.append({"id": "extension-discarded", "requirements": ["R-FRAME-7"],
                    "description": "an extension frame no one negotiated is skipped unread",
                    "hex": header(0x80, 3).hex() + "ffffff", "expect": {"discard": True}})

    # -- header rules --------------------------------------------------------
    cancel = enc({"reason": ""})
    bad("bad-magic", ["R-FRAME-2"], "magic 'TX'",
        header(7, len(cancel), magic=b"TX") + cancel, "FRAME_MALFORMED")
    bad("version-0", ["R-FRAME-3"], "frame version 0",
        header(7, len(cancel), version=0) + cancel, "UNSUPPORTED_VERSION")
    bad("version-2", ["R-FRAME-3"], "frame version 2",
        header(7, len(cancel), version=2) + cancel, "UNSUPPORTED_VERSION")
    bad("flags-set", ["R-FRAME-4"], "a reserved flag bit set",
        header(7, len(cancel), flags=0x8000) + cancel, "FRAME_MALFORMED")
    for t in (0x00, 0x09, 0x7F):
        bad(f"type-0x{t:02x}", ["R-FRAME-6"], f"reserved type 0x{t:02x}",
            header(t, len(cancel)) + cancel, "UNKNOWN_TYPE")
    bad("magic-before-version", ["R-FRAME-2", "R-FRAME-3"],
        "bad magic and bad version: magic is checked first",
        header(7, 1, magic=b"XX", version=9), "FRAME_MALFORMED")

    # -- the frame ceiling, at and one past (ceiling = the 64 KiB floor) -----
    envelope = enc({"stream": "stdout", "text": ""})
    fill = MIN_CEILING - len(envelope) - 2  # text grows by 2 header bytes past 255
    at_ceiling = enc({"stream": "stdout", "text": "x" * fill})
    assert len(at_ceiling) == MIN_CEILING, len(at_ceiling)
    ok("frame-at-ceiling", ["R-FRAME-5", "R-LIMIT-1"], "payload exactly at a 64 KiB ceiling",
       "OUTPUT", {"stream": "stdout", "text": "x" * fill}, max_frame_bytes=MIN_CEILING)
    bad("frame-past-ceiling", ["R-FRAME-5"],
        "declared length one past a 64 KiB ceiling: rejected from the header alone",
        header(5, MIN_CEILING + 1), "FRAME_TOO_LARGE", max_frame_bytes=MIN_CEILING)
    bad("frame-length-max", ["R-FRAME-5"], "declared length 2^32-1",
        header(5, 2**32 - 1), "FRAME_TOO_LARGE")

    # -- truncation ----------------------------------------------------------
    bad("truncated-header", ["R-TRANS-3"], "EOF after 5 header bytes",
        header(7, len(cancel))[:5], "TRUNCATED")
    bad("truncated-payload", ["R-TRANS-3"], "EOF one byte before the payload's end",
        frame("CANCEL", cancel)[:-1], "TRUNCATED")

    # -- strict CBOR ---------------------------------------------------------
    bad_payload("payload-empty", ["R-CBOR-1"], "a zero-length payload", "CANCEL", b"")
    bad_payload("payload-trailing", ["R-CBOR-1"], "one item followed by another", "CANCEL",
                cancel + b"\x00")
    bad_payload("payload-not-wellformed", ["R-CBOR-1"], "a lone break byte", "CANCEL", b"\xff")
    bad_payload("order-payload-before-schema", ["R-ORDER-1", "R-CBOR-2"],
                "a CANCEL with an unknown key and a reason whose length is not in its "
                "shortest form: the payload rule is checked first", "CANCEL",
                bytes.fromhex("a266726561736f6e78016162787801"))
    bad_payload("int-not-shortest", ["R-CBOR-2"], "call id 1 encoded in two bytes", "RESULT",
                bytes.fromhex("a262696418016576616c7565f6"))
    bad_payload("float-not-shortest", ["R-CBOR-2"], "1.5 as a double", "DONE",
                bytes.fromhex("a16576616c7565fb3ff8000000000000"))
    bad_payload("nan-not-canonical", ["R-CBOR-3"], "a NaN with a payload", "DONE",
                bytes.fromhex("a16576616c7565fb7ff8000000000001"))
    bad_payload("nan-half-negative", ["R-CBOR-3"], "a NaN with its sign bit set, in half "
                "precision", "DONE", bytes.fromhex("a16576616c7565f9fe00"))
    bad_payload("nan-half-payload", ["R-CBOR-3"], "a half-precision NaN with a payload", "DONE",
                bytes.fromhex("a16576616c7565f97e01"))
    ok("keys-in-senders-order", ["R-CBOR-2"], "'id' after 'value', and a value whose map "
       "keys are not in any sorted order: decoded in the order sent", "RESULT",
       {"value": {"zeta": 1, "alpha": [{"b": 2, "a": 1}], "mid": None}, "id": 7})
    bad_payload("keys-duplicate", ["R-CBOR-4"], "'reason' twice", "CANCEL",
                bytes.fromhex("a266726561736f6e6066726561736f6e60"))
    bad_payload("indefinite-length", ["R-CBOR-2"], "an indefinite-length array value",
                "DONE", bytes.fromhex("a16576616c75659f01ff"))
    bad_payload("tag-datetime", ["R-CBOR-5"], "tag 1 (epoch time)", "DONE",
                bytes.fromhex("a16576616c7565c11a5f5e1000"))
    bad_payload("tag-shared-ref", ["R-CBOR-5"], "tag 28 (shared value)", "DONE",
                bytes.fromhex("a16576616c7565d81c8101"))
    bad_payload("bignum-fits-64-bits", ["R-CBOR-3"], "tag 2 around the integer 1", "DONE",
                bytes.fromhex("a16576616c7565c24101"))
    bad_payload("bignum-leading-zero", ["R-CBOR-3"], "2^64 as a bignum with a leading zero",
                "DONE", bytes.fromhex("a16576616c7565c24a00010000000000000000"))
    bad_payload("simple-undefined", ["R-CBOR-6"], "the simple value undefined", "DONE",
                bytes.fromhex("a16576616c7565f7"))
    bad_payload("text-invalid-utf8", ["R-CBOR-7"], "a text string holding 0xff", "OUTPUT",
                bytes.fromhex("a2647465787461ff6673747265616d66737464657272"))
    bad_payload("bytes-map-key", ["R-CBOR-4"], "a map with a byte-string key", "DONE",
                bytes.fromhex("a16576616c7565a1416101"))
    depth = LIMITS["max_depth"] + 2  # the payload bound of R-CBOR-8 for a CALL

    def call_with(argument: Any) -> Any:
        return {"id": 1, "name": "f", "args": [argument], "kwargs": {}}

    ok("depth-at-limit", ["R-CBOR-8"], f"a CALL nested exactly max_depth + 2 = {depth} deep "
       "(its map, args, and an argument nested max_depth deep)", "CALL",
       call_with(_nest(depth - 2)))
    bad_payload("depth-past-limit", ["R-CBOR-8"], f"a CALL nested {depth + 1} deep", "CALL",
                enc(call_with(_nest(depth - 1))))
    ok("result-depth-at-limit", ["R-CBOR-8"], f"a RESULT value nested max_depth = "
       f"{depth - 2} deep: RESULT's envelope is its map alone", "RESULT",
       {"id": 1, "value": _nest(depth - 2)})
    ok("result-bignum-at-depth-limit", ["R-CBOR-8", "R-CBOR-5"], f"a RESULT value nested "
       f"max_depth = {depth - 2} deep around a bignum: a tag is not a container", "RESULT",
       {"id": 1, "value": _nest(depth - 2, 2**64)})
    bad_payload("result-depth-past-limit", ["R-CBOR-8", "R-VAL-1"],
                f"a RESULT value nested max_depth + 1 = {depth - 1} deep", "RESULT",
                enc({"id": 1, "value": _nest(depth - 1)}))
    bad_payload("done-depth-past-limit", ["R-CBOR-8", "R-VAL-1"],
                f"a DONE value nested max_depth + 1 = {depth - 1} deep", "DONE",
                enc({"value": _nest(depth - 1)}))
    for empty, name in (([], "array"), ({}, "map")):
        ok(f"depth-empty-{name}-at-limit", ["R-CBOR-8"],
           f"a CALL whose {depth}th container is an empty {name}: empty containers count",
           "CALL", call_with(_nest(depth - 3, empty)))
        bad_payload(f"depth-empty-{name}-past-limit", ["R-CBOR-8"],
                    f"a CALL whose {depth + 1}th container is an empty {name}", "CALL",
                    enc(call_with(_nest(depth - 2, empty))))

    # -- the item bound (R-CBOR-11): value_items(4096) + 64 = 1088 items -----
    # A RESULT's map, its two keys, its id and the value's array: 5 items.
    small = {"value_bytes": 4096}
    ok("items-at-limit", ["R-CBOR-11"], "a RESULT of exactly value_items + 64 = 1088 data "
       "items, for value_bytes 4096 (value_items 1024): read", "RESULT",
       {"id": 1, "value": [0] * 1083}, **small)
    bad("items-past-limit", ["R-CBOR-11", "R-VAL-1"], "a RESULT of 1089 data items, for "
        "value_bytes 4096: rejected, although its 1,100 bytes are well within the value's",
        frame("RESULT", enc({"id": 1, "value": [0] * 1084})), "MALFORMED_PAYLOAD", **small)
    bad("items-past-limit-empty-arrays", ["R-CBOR-11"], "a RESULT of 1089 data items that "
        "are empty arrays: each counts one", frame("RESULT", enc({"id": 1, "value": [[]] * 1084})),
        "MALFORMED_PAYLOAD", **small)

    # -- message schemas -----------------------------------------------------
    def schema(vid: str, reqs: list[str], what: str, frame_type: str, item: Any) -> None:
        bad_payload(vid, ["R-CBOR-10", *(r for r in reqs if r != "R-CBOR-10")], what, frame_type,
                    enc(item), error="INVALID_MESSAGE")

    schema("hello-missing-key", ["R-HELLO-1"], "HELLO without capabilities", "HELLO",
           {k: v for k, v in hello.items() if k != "capabilities"})
    schema("hello-no-languages", ["R-HELLO-3"], "HELLO with an empty language list", "HELLO",
           {**hello, "languages": []})
    schema("hello-unknown-key", ["R-VER-2"], "HELLO with a key no extension defines", "HELLO",
           {**hello, "color": "blue"})
    schema("run-limit-below-floor", ["R-LIMIT-1"], "RUN with frame_bytes below 64 KiB", "RUN",
           {"source": "", "language": "python", "bindings": [],
            "limits": {**LIMITS, "frame_bytes": 1000, "value_bytes": 10}})
    schema("run-binding-not-identifier", ["R-RUN-3"], "a binding named 'rm -rf'", "RUN",
           {"source": "", "language": "python", "bindings": [{"name": "rm -rf"}],
            "limits": LIMITS})
    schema("run-bindings-repeated", ["R-RUN-3"], "a RUN naming one binding twice", "RUN",
           {"source": "", "language": "python", "bindings": [{"name": "f"}, {"name": "f"}],
            "limits": LIMITS})
    schema("run-value-bytes-past-frame", ["R-LIMIT-1"],
           "RUN with value_bytes above frame_bytes - 1024", "RUN",
           {"source": "", "language": "python", "bindings": [],
            "limits": {**LIMITS, "value_bytes": LIMITS["frame_bytes"] - 1023}})
    run_vars = {"source": "", "language": "python", "bindings": [],
                "limits": {**LIMITS, "variables_bytes": 1024}, "variables": {"a": 1}}
    schema("run-variables-without-budget", ["R-VARS-1"],
           "RUN with variables but no variables_bytes", "RUN", {**run_vars, "limits": LIMITS})
    schema("run-budget-without-variables", ["R-VARS-1"],
           "RUN with variables_bytes but no variables", "RUN",
           {k: v for k, v in run_vars.items() if k != "variables"})
    schema("run-variable-private", ["R-VARS-1"], "a variable named '_a'", "RUN",
           {**run_vars, "variables": {"_a": 1}})
    schema("run-variable-is-binding", ["R-VARS-1"], "a variable named as a binding", "RUN",
           {**run_vars, "bindings": [{"name": "a"}]})
    schema("done-variables-without-dropped", ["R-VARS-3"], "DONE with variables alone",
           "DONE", {"value": None, "variables": {}})
    schema("call-id-zero", ["R-CALL-2"], "CALL id 0", "CALL",
           {"id": 0, "name": "f", "args": [], "kwargs": {}})
    schema("call-id-too-big", ["R-CALL-2"], "CALL id 2^53", "CALL",
           {"id": 2**53, "name": "f", "args": [], "kwargs": {}})
    schema("done-line-too-big", ["R-DONE-2"], "a DONE error at line 2^53", "DONE",
           {"error": {"type": "ValueError", "message": "", "traceback": "", "line": 2**53}})
    schema("result-id-integral-float", ["R-CALL-2"], "RESULT id 1.0: a float, however "
           "integral, is no uint", "RESULT", {"id": 1.0, "value": None})
    schema("run-limit-integral-float", ["R-LIMIT-1"], "RUN with max_depth 32.0", "RUN",
           {"source": "", "language": "python", "bindings": [],
            "limits": {**LIMITS, "max_depth": 32.0}})
    schema("hello-protocol-negative", ["R-ORDER-1", "R-HELLO-1"], "HELLO with protocol -1: "
           "no uint, so the schema fails before the version is compared", "HELLO",
           {**hello, "protocol": -1})
    schema("call-args-not-array", ["R-CALL-1"], "CALL whose args is a map", "CALL",
           {"id": 1, "name": "f", "args": {}, "kwargs": {}})
    schema("result-both", ["R-RESULT-2"], "RESULT with value and error", "RESULT",
           {"id": 1, "value": 1, "error": {"code": 100, "type": "E", "message": ""}})
    schema("result-connection-code", ["R-ERRCODE-1"], "RESULT error with code 4", "RESULT",
           {"id": 1, "error": {"code": 4, "type": "E", "message": ""}})
    schema("output-bad-stream", ["R-OUTPUT-1"], "OUTPUT on 'stdin'", "OUTPUT",
           {"stream": "stdin", "text": ""})
    schema("done-neither", ["R-DONE-1"], "DONE with neither value nor error", "DONE", {})
    schema("error-call-code", ["R-ERRCODE-1"], "ERROR with call code 100", "ERROR",
           {"code": 100, "message": ""})
    schema("error-unregistered-code", ["R-ERRCODE-1"], "ERROR with code 42", "ERROR",
           {"code": 42, "message": ""})
    schema("payload-not-map", ["R-CBOR-10"], "a CANCEL whose payload is an array", "CANCEL",
           ["timeout"])


def _nest(depth: int, inner: Any = 0) -> Any:
    value: Any = inner
    for _ in range(depth):
        value = [value]
    return value


def diagnostic(data: bytes, max_chars: int = 400) -> str | None:
    """Diagnostic notation of a vector's payload, when there is exactly one item."""
    if len(data) < 10:
        return None
    length = struct.unpack(">I", data[6:10])[0]
    payload = data[10:]
    if length != len(payload) or not payload:
        return None
    try:
        text: str = cbor_diag.cbor2diag(payload)
    except Exception:
        return None
    return text if len(text) <= max_chars else text[:max_chars] + " …"


def render_appendix() -> str:
    out = [
        "# Appendix A. Test vectors",
        "",
        "Generated by `conformance/vectors/generate.py` from `frames.json`; do not edit.",
        "Each vector is the whole byte string a receiver is fed (then end of stream),",
        "the payload in CBOR diagnostic notation where it is one well-formed item,",
        "and the outcome the spec requires: for a frame that decodes, its content in",
        "diagnostic notation with every map in the order sent (R-CBOR-2), which a",
        "receiver's decoded message must equal. The receiver's frame ceiling is 16 MiB",
        "and its `value_bytes` 8 MiB (the defaults) unless the vector says otherwise",
        "(`max_frame_bytes`, `value_bytes`); long hex is shortened here and given whole",
        "in `conformance/vectors/frames.json`.",
        "",
    ]
    for v in vectors:
        expect = v["expect"]
        if "message" in expect:
            outcome = f"decodes to this {expect['message']} message"
        elif "error" in expect:
            outcome = f"connection error {expect['error']}"
        else:
            outcome = "discarded"
        hexs = v["hex"]
        if len(hexs) > 240:
            hexs = f"{hexs[:240]}… ({len(hexs) // 2} bytes)"
        out += [f"## {v['id']}", "", f"{v['description']}. Checks {', '.join(v['requirements'])}."]
        if "max_frame_bytes" in v:
            out.append(f"Receiver's frame ceiling: {v['max_frame_bytes']}.")
        if "value_bytes" in v:
            out.append(f"Receiver's `value_bytes`: {v['value_bytes']} (so `value_items` is "
                       f"{max(1024, v['value_bytes'] // 16)}).")
        out += ["", "```", hexs, "```"]
        shown = expect.get("decoded") or v.get("diagnostic")
        if shown:
            if len(shown) > 400:
                shown = shown[:400] + " …"
            out += ["", "```text", shown, "```"]
        out += ["", f"Outcome: {outcome}.", ""]
    return "\n".join(out)


def main() -> int:
    build()
    for v in vectors:
        if "decoded" in v["expect"]:
            continue
        notation = diagnostic(bytes.fromhex(v["hex"]))
        if notation is not None:
            v["diagnostic"] = notation
    text = json.dumps({"vectors": vectors}, indent=1, ensure_ascii=False) + "\n"
    appendix = render_appendix()
    if "--check" in sys.argv:
        stale = [p.name for p, t in ((VECTORS, text), (APPENDIX, appendix))
                 if not p.exists() or p.read_text() != t]
        if stale:
            print(f"stale: {', '.join(stale)}; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    VECTORS.write_text(text)
    APPENDIX.write_text(appendix)
    print(f"{len(vectors)} vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
