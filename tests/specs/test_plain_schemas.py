"""A plain tool schema (no ``$ref``, ``$id``, ``$schema``, nor anything an older draft
writes differently) is loaded the short way: :func:`_functions.plain` skips the draft
upgrade and the ``$ref`` resolver, which would only copy it. The short way must give the
very operations, faults and warnings the long way gives, and leave the caller's tools
as they were: checked here on every tool of the shared BFCL files, on this repo's tool
data, and on made-up schemas that mix plain ones with what is not plain."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback._specs import _functions, load_spec
from autofeedback.core._exceptions import SpecError

DATA = Path(__file__).resolve().parents[1] / "data"


def _load(tools: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got: Any = load_spec(tools, source="<tools>")
        except SpecError as exc:
            got = ("SpecError", str(exc))
    return got, [str(w.message) for w in caught]


def _both_ways(tools: Any) -> None:
    before = copy.deepcopy(tools)
    short = _load(tools)
    with mock.patch.object(_functions, "plain", lambda schema: False):
        long = _load(tools)
    assert short == long
    assert tools == before  # the caller's tools are not changed


def test_plain_says_what_needs_the_long_way() -> None:
    assert _functions.plain({"type": "dict", "properties": {"n": {"type": "float"}}})
    assert _functions.plain({"properties": {"items": {"type": "array", "items": {}}}})
    for schema in (
        {"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
        {"properties": {"a": {"minimum": 1, "exclusiveMinimum": True}}},
        {"properties": {"a": {"additionalItems": False}}},
        {"dependencies": {"a": ["b"]}},
        {"anyOf": [{"$id": "https://example.com/a"}]},
        {"properties": {"a": {"$dynamicRef": "#node"}}},
    ):
        assert not _functions.plain(schema), schema


def _bfcl_tool_lists(folder: Path) -> list[list[Any]]:
    lists = []
    for path in sorted(folder.glob("BFCL_v4_*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                lists.append(json.loads(line)["function"])
    return lists


def test_every_bfcl_tool_loads_the_same_both_ways(shared_data_dir: Path) -> None:
    lists = _bfcl_tool_lists(shared_data_dir / "bfcl")
    assert len(lists) >= 1000
    plain = sum(_functions.plain(t["parameters"]) for tools in lists for t in tools)
    assert plain > 0.9 * sum(len(tools) for tools in lists)  # the short way is the usual one
    for tools in lists:
        _both_ways(tools)


def _tool_lists(value: Any, found: list[list[Any]]) -> None:
    """Every list of tools in ``value``: under a ``tools`` key, or a list of tool objects."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if key == "tools" and isinstance(sub, list) and sub:
                found.append(sub)
            else:
                _tool_lists(sub, found)
    elif isinstance(value, list):
        if value and all(
            isinstance(t, dict) and ("parameters" in t or "function" in t or "inputSchema" in t)
            for t in value
        ):
            found.append(value)
        else:
            for sub in value:
                _tool_lists(sub, found)


def test_this_repos_tool_data_loads_the_same_both_ways() -> None:
    found: list[list[Any]] = []
    for path in sorted(DATA.rglob("*.json*")):
        text = path.read_text(encoding="utf-8")
        docs = [text] if path.suffix == ".json" else text.splitlines()
        for doc in docs:
            try:
                _tool_lists(json.loads(doc), found)
            except json.JSONDecodeError:
                continue
        if path.suffix == ".jsonl":  # a JSON Lines file of tools is one tool list
            try:
                lines = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError:
                continue  # a log with bad lines on purpose
            _tool_lists(lines, found)
    assert len(found) >= 50
    for tools in found:
        _both_ways(tools)


_NAMES = st.sampled_from(["q", "city", "items", "id", "limit", "$ref", "dependencies"])
_TYPES = st.sampled_from(
    [
        "string",
        "integer",
        "dict",
        "float",
        "array",
        "list",
        "any",
        "tuple",
        "object",
        "number",
        "boolean",
        "null",
        "integr",
    ]
) | st.lists(st.sampled_from(["string", "null", "integer", "any"]), min_size=1, max_size=3)
_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4)


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyword = st.one_of(
        st.tuples(st.just("type"), _TYPES),
        st.tuples(st.just("properties"), st.dictionaries(_NAMES, children, max_size=3)),
        st.tuples(st.just("items"), children | st.lists(children, max_size=2)),
        st.tuples(
            st.sampled_from(["anyOf", "allOf", "oneOf", "prefixItems"]),
            st.lists(children, max_size=2),
        ),
        st.tuples(
            st.sampled_from(
                [
                    "additionalProperties",
                    "not",
                    "if",
                    "then",
                    "propertyNames",
                    "contains",
                    "additionalItems",
                ]
            ),
            children,
        ),
        st.tuples(st.sampled_from(["enum", "examples"]), st.lists(_SCALARS, max_size=3)),
        st.tuples(st.sampled_from(["default", "const", "description", "optional"]), _SCALARS),
        st.tuples(st.sampled_from(["minimum", "maximum"]), st.integers(-3, 3)),
        st.tuples(
            st.sampled_from(["exclusiveMinimum", "exclusiveMaximum"]),
            st.booleans() | st.integers(-3, 3),
        ),
        st.tuples(st.just("pattern"), st.sampled_from(["^a+$", "((", "[0-9]{2}"])),
        st.tuples(st.just("required"), st.lists(_NAMES, max_size=2)),
        st.tuples(st.just("$ref"), st.sampled_from(["#/$defs/A", "#/definitions/B", "#/nowhere"])),
        st.tuples(
            st.sampled_from(["$defs", "definitions", "dependentSchemas"]),
            st.dictionaries(st.sampled_from(["A", "B"]), children, max_size=2),
        ),
        st.tuples(
            st.just("dependencies"),
            st.dictionaries(_NAMES, st.lists(_NAMES, max_size=2) | children, max_size=2),
        ),
        st.tuples(st.just("$id"), st.sampled_from(["#frag", "https://example.com/s"])),
    )
    return st.lists(keyword, max_size=5).map(dict)


SCHEMAS = st.recursive(st.just({}) | st.booleans(), _schemas, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ping", "get_weather", "Ping"]),
            SCHEMAS,
            st.sampled_from(["parameters", "inputSchema"]),
            st.none() | SCHEMAS,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_made_up_tools_load_the_same_both_ways(tools: list[tuple[str, Any, str, Any]]) -> None:
    listed = []
    for name, schema, key, output in tools:
        tool: dict[str, Any] = {"name": name, "description": "d", key: schema}
        if output is not None:
            tool["outputSchema"] = output
        listed.append(tool)
    _both_ways(listed)


def test_a_schema_subclass_takes_the_long_way() -> None:
    class Schema(dict):  # type: ignore[type-arg]
        pass

    assert not _functions.plain({"properties": Schema(q={"type": "string"})})
    assert not _functions.plain([Schema()])
