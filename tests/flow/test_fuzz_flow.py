"""Arbitrary schemas, paths, SDL and tool lists never raise anything but a SpecError."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, SpecError
from autofeedback.flow import iter_paths, parse_path, response_schemas_from_graphql
from autofeedback.sequences import FlowGraph, closest_path, schema_at

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = st.sampled_from(["id", "results", "items", "token", "name", "[]", "x"])
SCHEMAS = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["string", "integer", "array", "object", ["string", "null"], 5, None]
            )
        },
    ),
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object")},
            optional={
                "properties": st.one_of(st.dictionaries(WORDS, inner, max_size=3), st.just([])),
                "additionalProperties": st.one_of(st.booleans(), inner),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.just("array")},
            optional={"items": st.one_of(inner, st.lists(inner, max_size=2), st.just(3))},
        ),
        st.fixed_dictionaries(
            {},
            optional={
                "allOf": st.lists(inner, max_size=2),
                "anyOf": st.one_of(st.lists(inner, max_size=2), st.just("x")),
            },
        ),
    ),
    max_leaves=10,
)
STEPS = st.lists(
    st.one_of(WORDS, st.integers(min_value=0, max_value=3), st.text(max_size=5)), max_size=5
)


@SETTINGS
@given(SCHEMAS, STEPS)
def test_paths_never_raise(schema: Any, steps: list[Any]) -> None:
    at = schema_at(schema, steps)
    assert at is None or isinstance(at, dict)
    near = closest_path(schema, steps)
    if near is not None:
        assert schema_at(schema, parse_path(near)) is not None  # the suggestion exists
    for path, sub in iter_paths(schema):
        assert schema_at(schema, list(path)) == sub


@SETTINGS
@given(st.text(max_size=60))
def test_parse_path_never_raises(text: str) -> None:
    assert isinstance(parse_path(text), list)


@SETTINGS
@given(
    st.one_of(
        st.text(max_size=80),
        st.lists(
            st.sampled_from(
                [
                    "type",
                    "Query",
                    "{",
                    "}",
                    "f",
                    ":",
                    "[",
                    "]",
                    "!",
                    "JSON",
                    "scalar",
                    "extend",
                    "union",
                    "=",
                    "|",
                    "schema",
                    "query",
                    "input",
                    "(",
                    ")",
                    "@rest",
                ]
            ),
            max_size=25,
        ).map(" ".join),
    )
)
def test_graphql_sdl_is_read_or_a_spec_error(sdl: str) -> None:
    try:
        schemas = response_schemas_from_graphql(sdl)
    except SpecError:
        return
    assert all(isinstance(s, dict) for s in schemas.values())


@SETTINGS
@given(
    st.lists(
        st.tuples(WORDS, SCHEMAS, st.dictionaries(WORDS, SCHEMAS, max_size=3)),
        min_size=1,
        max_size=4,
    )
)
def test_graph_never_raises(tools: list[tuple[str, Any, dict[str, Any]]]) -> None:
    specs = [
        {
            "name": f"{name}{i}",
            "parameters": {"type": "object", "properties": params},
            "outputSchema": out,
        }
        for i, (name, out, params) in enumerate(tools)
    ]
    try:
        catalog = ApiCatalog.from_tools(specs)
    except SpecError:
        return
    graph = FlowGraph.from_catalog(catalog)
    for op in catalog:
        for p in op.parameters:
            for prod in graph.producers(op.name, p.name):
                assert prod.operation in catalog
        graph.consumers(op.name)
