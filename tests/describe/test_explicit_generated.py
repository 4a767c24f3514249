"""Hypothesis over explicit JSON Schemas (the MCP path): validation admits
exactly what the reference validator admits, every instance the schema
describes passes, and the declarations rendered from it are valid code."""

from __future__ import annotations

import ast
import asyncio
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether import Binding
from tether.host import describe, prepare_bindings
from tether.host.bindings import stubs_python, stubs_typescript

from .test_render import Checker, checker, typescript_errors

__all__ = ["checker"]  # the module's warm TypeScript checker (a fixture)

# Each strategy draws (schema, the strategy of the values it admits).
Pair = tuple[dict[str, Any], st.SearchStrategy[Any]]
text = st.text(max_size=4)
leaves: st.SearchStrategy[Pair] = st.one_of(
    st.just(({"type": "string"}, text)),
    st.integers(0, 3).map(lambda n: ({"type": "string", "minLength": n},
                                     st.text(min_size=n, max_size=n + 2))),
    st.just(({"type": "integer"}, st.integers())),
    st.tuples(st.integers(-5, 0), st.integers(0, 5)).map(
        lambda r: ({"type": "integer", "minimum": r[0], "maximum": r[1]},
                   st.integers(r[0], r[1]))),
    st.just(({"type": "number"}, st.integers() | st.floats(allow_nan=False,
                                                           allow_infinity=False))),
    st.just(({"type": "boolean"}, st.booleans())),
    st.just(({"type": "null"}, st.none())),
    st.lists(st.sampled_from(["a", "b", 1, None, True]), min_size=1, max_size=3,
             unique=True).map(lambda v: ({"enum": v}, st.sampled_from(v))),
)


def _grow(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    return st.one_of(
        inner.map(lambda p: ({"type": "array", "items": p[0], "maxItems": 3},
                             st.lists(p[1], max_size=3))),
        st.lists(inner, min_size=2, max_size=3).map(
            lambda ps: ({"anyOf": [p[0] for p in ps]}, st.one_of([p[1] for p in ps]))),
        inner.map(lambda p: ({"type": "object", "additionalProperties": p[0],
                              "maxProperties": 2},
                             st.dictionaries(text, p[1], max_size=2))),
        objects(inner),
    )


def objects(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    def build(props: dict[str, Pair], required: set[str]) -> Pair:
        schema = {"type": "object", "properties": {k: p[0] for k, p in props.items()},
                  "required": sorted(required), "additionalProperties": False}
        values = st.fixed_dictionaries(
            {k: p[1] for k, p in props.items() if k in required},
            optional={k: p[1] for k, p in props.items() if k not in required})
        return schema, values

    return st.dictionaries(st.sampled_from(["a", "b_c", "d-e", "class"]), inner, min_size=1,
                           max_size=3).flatmap(lambda props: st.sets(
        st.sampled_from(sorted(props))).map(lambda required: build(props, required)))


schemas = objects(st.recursive(leaves, _grow, max_leaves=5))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False,
                                                                  allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "b_c", "d-e", "class", "z"]), inner, max_size=3),
    max_leaves=6)


def binding_for(schema: dict[str, Any]) -> Any:
    return prepare_bindings([Binding("tool", "A tool.", schema, lambda **kw: kw)])["tool"]


def admitted(binding: Any, value: Any) -> bool:
    try:
        asyncio.run(binding.invoke([value], {}))
    except TypeError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.data())
def test_validation_agrees_with_the_reference_validator(pair: Pair,
                                                        data: st.DataObject) -> None:
    schema, instances = pair
    binding = binding_for(schema)
    instance = data.draw(instances)
    assert admitted(binding, instance), instance
    value = dict(data.draw(instances))  # one of its arguments replaced by any value
    if value:
        value[data.draw(st.sampled_from(sorted(value)))] = data.draw(json_values)
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert admitted(binding, value) == expected, value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=schemas)
def test_declarations_from_any_schema_are_valid_code(checker: Checker,
                                                     pair: Pair) -> None:
    schema = pair[0]
    description = describe(Binding("tool", "A tool.", schema, lambda **kw: kw))
    ast.parse(stubs_python.render([description]))
    typescript = stubs_typescript.render([description])
    assert typescript_errors(checker, [typescript]) == [[]], typescript
