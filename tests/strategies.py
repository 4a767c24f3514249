"""Hypothesis strategies for wire values and messages, shared by the tests."""

from __future__ import annotations

import dataclasses
import string
from typing import Any

from hypothesis import strategies as st

from tether.codec import (
    MAX_CALL_ID,
    Binding,
    Call,
    CallError,
    Cancel,
    Done,
    Error,
    ErrorCode,
    Hello,
    Message,
    Output,
    ProgramError,
    Result,
    Run,
    RunLimits,
    Stream,
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.binary()
)


def values(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
        max_leaves=max_leaves,
    )


identifiers = st.text(string.ascii_letters + "_", min_size=1, max_size=12)
call_ids = st.integers(1, MAX_CALL_ID)
call_codes = st.sampled_from([c for c in ErrorCode if not c.fatal])
fatal_codes = st.sampled_from([c for c in ErrorCode if c.fatal])
limits = st.builds(
    RunLimits,
    output_bytes=st.integers(0, 2**40),
    value_bytes=st.integers(1, 65536 - 1024),
    frame_bytes=st.integers(65536, 2**32 - 1),
    max_depth=st.integers(16, 512),
    max_calls_in_flight=st.integers(1, 10_000),
    memory_bytes=st.none() | st.integers(0, 2**40),
    cpu_seconds=st.none() | st.integers(0, 10_000),
)

messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Hello, implementation=st.text(), languages=st.lists(st.text(), min_size=1).map(tuple),
              capabilities=st.lists(st.text()).map(tuple)),
    st.builds(Run, source=st.text(), language=st.text(),
              bindings=st.lists(st.builds(Binding, name=identifiers,
                                          signature=st.none() | st.text(),
                                          doc=st.none() | st.text()),
                                unique_by=lambda b: b.name).map(tuple),
              limits=limits),
    st.builds(Call, id=call_ids, name=st.text(), args=st.lists(values(), max_size=4),
              kwargs=st.dictionaries(st.text(), values(), max_size=4)),
    st.builds(Result, id=call_ids, value=values()),
    st.builds(Result, id=call_ids,
              error=st.builds(CallError, code=call_codes, type=st.text(), message=st.text())),
    st.builds(Output, stream=st.sampled_from(Stream), text=st.text()),
    st.builds(Done, value=values()),
    st.builds(Done, error=st.builds(ProgramError, type=st.text(), message=st.text(),
                                    traceback=st.text(),
                                    line=st.none() | st.integers(1, 10**6),
                                    code=st.none() | call_codes)),
    st.builds(Cancel, reason=st.text()),
    st.builds(Error, code=fatal_codes, message=st.text()),
)

#: Names RUN's variables may have (R-VARS-1).
variable_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,11}", fullmatch=True)
_variables = st.dictionaries(variable_names, values(), max_size=4)
_dropped = st.dictionaries(st.text(), st.text(), max_size=3)
#: Messages carrying state as values (spec §7.9).
stateful_messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Run, source=st.text(), language=st.text(), bindings=st.just(()),
              limits=st.builds(lambda limits, budget: dataclasses.replace(
                  limits, variables_bytes=budget), limits, st.integers(0, 4 * 1024 * 1024)),
              variables=_variables, last_expression=st.booleans()),
    st.builds(Done, value=values(), variables=_variables, dropped=_dropped),
    st.builds(Done, error=st.builds(ProgramError, type=st.text(), message=st.text()),
              variables=_variables, dropped=_dropped),
)
messages = messages | stateful_messages
