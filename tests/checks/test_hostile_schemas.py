"""A schema a spec or a log record got wrong is the spec's problem (issue 18): keywords
holding values of the wrong JSON type or out of float range never make a request
"could not be checked" (the fuzz benchmark's hostile ``tools`` found three)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, Scanner

_odd = st.one_of(
    st.just([]),
    st.just("x"),
    st.just(5),
    st.just(10**400),
    st.just(-(10**400)),
    st.just(1e308),
    st.just({"": {}}),
    st.just([{"type": "integer"}, 3]),
    st.none(),
    st.booleans(),
)
_keyword = st.sampled_from(
    [
        "properties",
        "items",
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "multipleOf",
        "enum",
        "minLength",
        "additionalProperties",
        "oneOf",
        "allOf",
        "not",
        "dependentRequired",
        "prefixItems",
        "contains",
    ]
)
_values = st.one_of(
    st.integers(-(10**40), 10**40),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    type_=st.sampled_from(["object", "array", "integer", "number", "string", None]),
    keywords=st.dictionaries(_keyword, _odd, min_size=1, max_size=3),
    value=_values,
)
def test_a_malformed_schema_never_makes_a_request_uncheckable(
    type_: str | None, keywords: dict[str, Any], value: Any
) -> None:
    schema = {**({"type": type_} if type_ else {}), **keywords}
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"p": schema}, "required": ["p"]},
            },
        }
    ]
    catalog = ApiCatalog.from_tools(tools)
    scanner = Scanner(catalog, retriever=None)
    findings = list(scanner.iter_findings({"name": "f", "arguments": {"p": value}}))
    assert not [f for f in findings if f.code == "E1"], findings
    # nothing escapes either when the caller asks for errors to be raised (the audit)
    raised = list(scanner.iter_findings({"name": "f", "arguments": {"p": value}}, on_error="raise"))
    assert raised == findings
