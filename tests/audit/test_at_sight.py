"""Call records clean at sight (autofeedback/audit/_at_sight.py): the audit answers a right
call from the record's own tool list, with no catalog built. Only a ``True`` is trusted,
so every ``True`` must be the long way's verdict: no finding, and nothing the loading of
that tool list would have warned of or refused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from autofeedback.audit._at_sight import clean_at_sight
from autofeedback.audit._audit import _CatalogCache, audit_lines
from autofeedback.core._exceptions import SpecError


def long_way(record: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The codes of the findings and the warnings of the audit's long way: the record's
    tool list loaded into a catalog, its call checked by the scanner."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scanner = _CatalogCache(None, None).scanner(record["tools"])
        except SpecError as exc:
            return [f"bad tools: {exc.reason}"], [str(w.message) for w in caught]
        codes = [f.code for f in scanner.iter_findings(record["call"], on_error="raise")]
    return codes, [str(w.message) for w in caught]


def record(tools: Any, name: str = "f", arguments: Any = None, **more: Any) -> dict[str, Any]:
    return {"id": 1, "tools": tools, "call": {"name": name, "arguments": arguments or {}}, **more}


def tool(parameters: Any, name: str = "f", **more: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "parameters": parameters, **more}


INTEGER_N = {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.mark.parametrize(
    "case",
    [
        record([tool(INTEGER_N)], arguments={"n": 2}),
        record([{"type": "function", "function": tool(INTEGER_N)}], arguments={"n": 2}),
        record([tool(INTEGER_N), tool({}, name="g")], arguments={"n": 2}),
        record([tool(None)]),
        record([{"name": "f"}]),
        record(
            [tool({"type": "object", "properties": {"tags": {"type": "array", "items": {
                "type": "string", "enum": ["a", "b"]}}, "when": {"type": ["string", "null"]},
                "any": {"type": "any", "default": [1, 2]}}, "additionalProperties": False})],
            arguments={"tags": ["a", "b"], "when": None, "any": {"x": [1]}},
        ),
        record(
            [tool({"type": "dict", "properties": {"x": {"type": "float"}, "pair": {
                "type": "tuple", "items": {"type": "Integer"}}, "either": {"type": [
                "str", "string", "bool"]}}})],
            arguments={"x": 2.5, "pair": [1, 2], "either": True},
        ),
    ],
    ids=["bfcl", "openai", "two-tools", "no-parameters", "name-only", "nested", "mapped-types"],
)  # fmt: skip
def test_a_right_call_is_clean_at_sight_and_the_long_way(case: dict[str, Any]) -> None:
    assert clean_at_sight(case) is True
    assert long_way(case) == ([], [])


#: Records the long way finds something in (a finding, a warning, a refused list): none
#: may be clean at sight.
NOT_AT_SIGHT = {
    # the call
    "wrong type": (record([tool(INTEGER_N)], arguments={"n": "2"}), ["E4.1"], 0),
    "a fraction for an integer": (record([tool(INTEGER_N)], arguments={"n": 2.5}), ["E4.1"], 0),
    "missing required": (record([tool(INTEGER_N)]), ["E3.4"], 0),
    "unlisted argument": (record([tool(INTEGER_N)], arguments={"n": 1, "m": 1}), ["E3"], 0),
    "unknown function": (record([tool(INTEGER_N)], name="g", arguments={"n": 1}), ["E2"], 0),
    # the called tool
    "an unknown type": (
        record([tool({"properties": {"n": {"type": "integr"}}})], arguments={"n": 1}), [], 1
    ),
    "an invalid pattern": (
        record([tool({"properties": {"n": {"type": "string", "pattern": "(("}}})],
               arguments={"n": "x"}), [], 1,
    ),
    # the other tools: set aside, warned of, refused
    "a name twice": (record([tool(INTEGER_N), tool({}, name="f")], arguments={"n": 1}),
                     ["E2"], 1),
    "a Cyrillic look-alike": (
        record([tool(INTEGER_N), tool({}, name="f\u0430")], arguments={"n": 1}), [], 1
    ),
    "another's unknown type": (
        record([tool(INTEGER_N), tool({"properties": {"x": {"type": "strng"}}}, name="g")],
               arguments={"n": 1}), [], 1,
    ),
    "another's invalid pattern in a description": (
        record([tool(INTEGER_N), tool({"properties": {"x": {"description": {"pattern": "(("}}}},
                                      name="g")], arguments={"n": 1}), [], 1,
    ),
    "another's parameters not an object": (
        record([tool(INTEGER_N), tool([], name="g")], arguments={"n": 1}),
        ["bad tools: 'parameters' must be a JSON Schema object"], 0,
    ),
    "another without a name": (
        record([tool(INTEGER_N), {"description": "d", "parameters": {}}], arguments={"n": 1}),
        ["bad tools: function has no 'name'"], 0,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(NOT_AT_SIGHT))
def test_what_the_long_way_finds_is_never_clean_at_sight(name: str) -> None:
    case, codes, warned = NOT_AT_SIGHT[name]
    assert clean_at_sight(case) is False
    found, warnings_ = long_way(case)
    assert found == codes
    assert len(warnings_) == warned


@pytest.mark.parametrize(
    "case",
    [
        record([tool(INTEGER_N)], arguments={"n": 1}, instruction="ping 1"),  # judged with it
        record([tool(INTEGER_N)], arguments={"n": 1}, history=[]),
        record([tool({**INTEGER_N, "optional": []})], arguments={"n": 1}),
        record([tool({"properties": {"n": {"type": "integer", "optional": True}}})]),
        record([tool({"properties": {"n": {"minimum": 0}}})], arguments={"n": 1}),
        record([tool({"properties": {"$ref": {"type": "string"}}})]),
        record([tool({"properties": {"n": {"default": {"a": 1}}}})]),
        record([tool({"type": "object", "additionalProperties": True})]),
        record([tool(INTEGER_N)], arguments={"n": 2.0}),  # an integer, as JSON Schema reads it
        record([tool(INTEGER_N)], arguments='{"n": 1}'),  # JSON text, read as its object
        record([tool(INTEGER_N, name=" f")], name=" f", arguments={"n": 1}),
        record([{**tool(INTEGER_N), "outputSchema": {"type": "object"}}], arguments={"n": 1}),
        record([{"type": "function", "name": "f", "parameters": INTEGER_N}], arguments={"n": 1}),
        record([{"name": "f", "input_schema": INTEGER_N}], arguments={"n": 1}),
        record({"tools": [tool(INTEGER_N)]}, arguments={"n": 1}),
    ],
    ids=["instruction", "history", "optional-list", "optional-flag", "a-bound", "ref-name",
         "object-default", "more-allowed", "integral-float", "arguments-text", "spaced-name",
         "output-schema", "responses-shape", "anthropic-shape", "tools-object"],
)  # fmt: skip
def test_what_the_walk_does_not_read_goes_the_long_way(case: dict[str, Any]) -> None:
    # each may well be clean, but the loader or the checks read more than the walk does
    assert clean_at_sight(case) is False


def test_the_audit_answers_at_sight_as_the_long_way() -> None:
    lines = [
        json.dumps(record([tool(INTEGER_N)], arguments={"n": 2})),
        json.dumps(record([tool(INTEGER_N)], arguments={"n": "2"})),
        json.dumps(record([tool(INTEGER_N), tool({}, name="f")], arguments={"n": 2})),
    ]
    for lookahead in (0, 64):  # with and without the read-ahead's batch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the name listed twice is warned of
            results = list(audit_lines(lines, None, retriever=None, lookahead=lookahead))
        assert [(r.id, r.ok, [f.code for f in r.findings], r.error) for r in results] == [
            (1, True, [], None),
            (1, False, ["E4.1"], None),
            (1, False, ["E2"], None),
        ]


# -- generated tool lists: every True of the walk is the long way's "clean" -------------

_NAMES = st.sampled_from(["a", "b", "n", "$ref", "items", "pattern", "optional"])
_TYPES = st.sampled_from(
    ["string", "integer", "number", "boolean", "null", "object", "array", "dict", "float",
     "int", "str", "bool", "tuple", "list", "any", " Integer", "integr", "file"]
)  # fmt: skip
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5]),
                     st.sampled_from(["", "x", "a"]))  # fmt: skip
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=3)
    ),
    max_leaves=6,
)


def _schemas(depth: int, plain_only: bool) -> st.SearchStrategy[Any]:
    child = _schemas(depth - 1, plain_only) if depth else st.just({"type": "string"})
    plain: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(_TYPES, st.lists(_TYPES, max_size=3)),
        "enum": st.lists(_SCALARS, max_size=3),
        "description": st.just("text"),
        "default": _SCALARS,
        "items": child,
        "properties": st.dictionaries(_NAMES, child, max_size=3),
        "required": st.lists(_NAMES, max_size=2),
        "additionalProperties": st.one_of(st.booleans(), child),
    }
    if plain_only:  # what the walk reads, in the shapes it vouches for
        return _plain_schemas(depth)
    more = {
        **plain,
        "enum": st.one_of(st.lists(_SCALARS, max_size=3), st.just([{"a": 1}])),
        "description": st.one_of(st.just("text"), st.just({"pattern": "(("})),
        "default": _VALUES,
        "items": st.one_of(child, st.lists(child, max_size=1)),
        "pattern": st.sampled_from(["^a", "(("]),
        "minimum": st.just(0),
        "optional": st.booleans(),
        "format": st.just("date"),
    }
    return st.one_of(st.fixed_dictionaries({}, optional=more), st.booleans())


_GOOD_TYPES = st.sampled_from(
    ["string", "integer", "number", "boolean", "null", "object", "array", "dict", "float",
     "int", "str", "bool", "tuple", "list", "any", " Integer"]
)  # fmt: skip


@st.composite
def _plain_schemas(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if draw(st.booleans()):
        schema["type"] = draw(st.one_of(_GOOD_TYPES, st.lists(_GOOD_TYPES, min_size=1, max_size=3)))
    if draw(st.integers(0, 3)) == 0:
        schema["enum"] = draw(st.lists(_SCALARS, max_size=3))
    if draw(st.booleans()):
        schema["description"] = "text"
    if draw(st.integers(0, 3)) == 0:
        schema["default"] = draw(_SCALARS)
    if depth and draw(st.booleans()):
        names = draw(
            st.lists(st.sampled_from(["a", "b", "items", "pattern"]), unique=True, max_size=3)
        )
        schema["properties"] = {n: draw(_plain_schemas(depth - 1)) for n in names}
        schema["required"] = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    if depth and draw(st.integers(0, 2)) == 0:
        schema["items"] = draw(_plain_schemas(depth - 1))
    if depth and draw(st.integers(0, 3)) == 0:
        schema["additionalProperties"] = draw(st.one_of(st.booleans(), _plain_schemas(depth - 1)))
    if draw(st.integers(0, 11)) == 0:  # now and then, one thing the loader reads otherwise
        key, value = draw(st.sampled_from(_HAZARDS))
        schema[key] = value
    return schema


#: one key each that the walk must not vouch for: an unknown type, a type the walk does
#: not judge, a copy the loader makes, an invalid pattern in an annotation, a bound
_HAZARDS = [
    ("type", "integr"),
    ("type", ["string", "file"]),
    ("optional", True),
    ("enum", ["", "x", {"$ref": "#/nowhere"}]),
    ("description", {"pattern": "(("}),
    ("default", {"$ref": "#/x"}),
    ("items", [{"type": "string"}]),
    ("minimum", 0),
    ("format", "date"),
    ("properties", {"$ref": {"type": "string"}}),
]


def _parameters(plain_only: bool) -> st.SearchStrategy[Any]:
    if plain_only:
        return st.tuples(
            _plain_schemas(2), st.sampled_from([None, "object", "dict", " Dict"]), st.booleans()
        ).map(
            lambda t: {
                **{k: v for k, v in t[0].items() if k in ("properties", "required")},
                **({} if t[1] is None else {"type": t[1]}),
                **({"description": "p"} if t[2] else {}),
            }
        )
    return st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(["object", "dict", " Dict", "string"]),
            "properties": st.dictionaries(_NAMES, _schemas(2, False), max_size=3),
            "required": st.lists(_NAMES, max_size=2),
            "additionalProperties": st.one_of(st.booleans(), _schemas(1, False)),
            "optional": st.just([]),
            "description": st.just("p"),
        },
    )


_TOOL_NAMES = st.sampled_from(["f", "g", "f ", "get.x", "\u0444", "f\u0430"])
_KINDS = {"dict": "object", "float": "number", "int": "integer", "str": "string",
          "bool": "boolean", "tuple": "array", "list": "array"}  # fmt: skip
_OF_KIND: dict[str, st.SearchStrategy[Any]] = {
    "string": st.sampled_from(["", "x"]),
    "integer": st.integers(-3, 3),
    "number": st.one_of(st.integers(-3, 3), st.just(2.5)),
    "boolean": st.booleans(),
    "null": st.none(),
}


def _value_for(draw: st.DrawFn, schema: Any, depth: int = 0) -> Any:
    """A value drawn to fit ``schema`` as the loader reads it, now and then not."""
    if type(schema) is not dict or depth > 4 or draw(st.integers(0, 9)) == 0:
        return draw(_VALUES)
    enum = schema.get("enum")
    if type(enum) is list and enum:
        return draw(st.sampled_from(enum))
    kinds = schema.get("type")
    kinds = kinds if type(kinds) is list and kinds else [kinds]
    kind = draw(st.sampled_from(kinds))
    kind = kind.strip().lower() if type(kind) is str else None
    kind = _KINDS.get(kind or "", kind)
    if kind == "object" or (kind is None and "properties" in schema):
        props: dict[str, Any] = schema.get("properties") or {}
        required: list[Any] = schema.get("required") or []
        if type(props) is not dict or type(required) is not list:
            return draw(_VALUES)
        return {
            k: _value_for(draw, sub, depth + 1)
            for k, sub in props.items()
            if k in required or draw(st.booleans())
        }
    if kind == "array":
        return [
            _value_for(draw, schema.get("items"), depth + 1) for _ in range(draw(st.integers(0, 2)))
        ]
    if kind in _OF_KIND:
        return draw(_OF_KIND[kind])
    return draw(_VALUES)


@st.composite
def _records(draw: st.DrawFn) -> dict[str, Any]:
    # one list in four may hold anything; the others are what the walk mostly vouches
    # for, so that its every True is compared with the long way often enough
    anything = draw(st.integers(0, 3)) == 0
    names = draw(
        st.lists(_TOOL_NAMES, min_size=1, max_size=3)
        if anything
        else st.lists(st.sampled_from(["f", "g", "get.x"]), min_size=1, max_size=3, unique=True)
    )
    tools = []
    for name in names:
        function: dict[str, Any] = {"name": name}
        if draw(st.booleans()):
            kinds = st.one_of(_parameters(False), st.just([])) if anything else _parameters(True)
            function["parameters"] = draw(kinds)
        if draw(st.booleans()):
            function["description"] = draw(st.sampled_from(["d", 1] if anything else ["d"]))
        wrapped = draw(st.booleans())
        tools.append({"type": "function", "function": function} if wrapped else function)
    functions = [t.get("function", t) for t in tools]
    called = draw(st.sampled_from([*functions, {"name": "h"}]))
    parameters = called.get("parameters")
    if type(parameters) is dict:
        arguments = _value_for(draw, {**parameters, "type": "object"})
    else:
        arguments = draw(st.one_of(st.dictionaries(_NAMES, _VALUES, max_size=3), _VALUES))
    return {"id": 1, "tools": tools, "call": {"name": called["name"], "arguments": arguments}}


@settings(max_examples=1_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records())
def test_generated_records_clean_at_sight_are_clean_the_long_way(case: dict[str, Any]) -> None:
    if clean_at_sight(case):
        assert long_way(case) == ([], [])


def test_the_generated_records_reach_clean_at_sight() -> None:
    # not a vacuous property: the generator makes records the walk vouches for, with a
    # second tool and with arguments
    found = find(
        _records(),
        lambda r: clean_at_sight(r) and len(r["tools"]) > 1 and bool(r["call"]["arguments"]),
        settings=settings(max_examples=2_000, database=None, phases=[Phase.generate]),
    )
    assert clean_at_sight(found)


def test_the_gold_calls_of_bfcl(shared_data_dir: Path) -> None:
    # BFCL's right calls (benchmarks/_records.gold_lines: simple and multiple, each record
    # with its own tool list): nearly all are clean at sight, and each one that is, is
    # clean the long way; the rest are audited the long way, as before
    from benchmarks._records import gold_lines

    records = [json.loads(line) for line in gold_lines()]
    at_sight = [r for r in records if clean_at_sight(r)]
    assert len(records) == 600
    assert len(at_sight) == 581
    for case in at_sight:
        assert long_way(case) == ([], []), case["id"]
