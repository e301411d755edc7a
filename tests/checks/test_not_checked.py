"""A value whose pattern the bounded matcher could not decide in the call's time budget
is neither blamed nor reported clean: it gets a warning that says so, field by field.

A budget of no time (``PatternBudget(0.0)``) makes every bounded search undecided at
once, so these tests need no slow value and assert no duration."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from autofeedback import ApiCatalog, ApiRequest, Finding, Scanner
from autofeedback.checks._check_values import not_checked
from autofeedback.core._patterns import PatternBudget

#: a back-reference: RE2 cannot run it, so the bounded matcher does
TWICE = r"^(\w+)-\1$"
DOUBLE = r"^(\w)\1$"
WARNING = (
    ": not checked against the documented pattern {}: it needs a backtracking matcher "
    "(checked with a bounded matcher), which ran out of time on this value"
)


def _fields(finding: Finding) -> tuple[Any, ...]:
    return (
        finding.code,
        finding.location,
        finding.got,
        finding.expected,
        finding.suggestion,
        finding.operation,
        finding.doc,
        finding.severity,
        finding.message,
    )


def _pair_findings(arguments: dict[str, Any], seconds: float) -> list[Finding]:
    properties = {
        "twice": {"type": "string", "pattern": TWICE, "description": " Two equal words. "},
        "double": {"type": "string", "pattern": DOUBLE},
        "plain": {"type": "string", "pattern": r"^\w+$"},
    }
    tool = {"name": "pair", "parameters": {"type": "object", "properties": properties}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    with PatternBudget(seconds):
        return list(scanner.iter_findings({"name": "pair", "arguments": arguments}))


def test_a_value_left_undecided_is_a_warning_field_by_field() -> None:
    findings = _pair_findings({"twice": "ab-ab", "double": "cc"}, 0.0)
    assert [_fields(f) for f in findings] == [
        (
            "E4.2",
            ("argument", "twice"),
            "ab-ab",
            {"pattern": TWICE},
            None,
            "pair",
            "Two equal words.",
            "warning",
            "twice" + WARNING.format(r"'^(\\w+)-\\1$'"),
        ),
        (
            "E4.2",
            ("argument", "double"),
            "cc",
            {"pattern": DOUBLE},
            None,
            "pair",
            "",
            "warning",
            "double" + WARNING.format(r"'^(\\w)\\1$'"),
        ),
    ]
    assert [not_checked(f) for f in findings] == [True, True]


def test_a_value_decided_in_time_gets_no_warning() -> None:
    assert _pair_findings({"twice": "ab-ab", "double": "cc"}, 10.0) == []
    # a linear-time pattern is decided whatever the budget
    assert _pair_findings({"plain": "ab"}, 0.0) == []


def test_only_the_warning_is_not_checked() -> None:
    [wrong] = _pair_findings({"twice": "ab-cd"}, 10.0)
    assert (wrong.code, wrong.severity, not_checked(wrong)) == ("E4.2", "error", False)
    [warning] = _pair_findings({"twice": "ab-ab"}, 0.0)
    assert not_checked(dataclasses.replace(warning, severity="error")) is False
    other = dataclasses.replace(warning, message="twice: may be checked later")
    assert not_checked(other) is False


def test_a_composed_body_left_undecided_is_a_warning() -> None:
    shape = {
        "type": "object",
        "properties": {
            "twice": {"type": "string", "pattern": TWICE},
            "n": {"type": "integer", "description": "A count."},
        },
    }
    other = {"type": "object", "properties": {"kind": {"const": "x"}}, "required": ["kind"]}
    content = {"application/json": {"schema": {"oneOf": [shape, other]}}}
    post = {"operationId": "addPair", "requestBody": {"content": content}, "responses": {}}
    spec = {"openapi": "3.0.3", "info": {"title": "pairs", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pairs": {"post": post}}
    scanner = Scanner(ApiCatalog.from_obj(spec), retriever=None)
    request = ApiRequest(method="POST", url="/pairs", body={"n": 1, "twice": "ab-ab"})
    assert list(scanner.iter_findings(request)) == []
    with PatternBudget(0.0):
        findings = list(scanner.iter_findings(request))
    # the body's fields are validated as one object: the warning names the field whose
    # value the pattern was left undecided on, not the body's first field
    assert [_fields(f) for f in findings] == [
        (
            "E4.2",
            ("body", "twice"),
            "ab-ab",
            {"pattern": TWICE},
            None,
            "addPair",
            "",
            "warning",
            "twice" + WARNING.format(r"'^(\\w+)-\\1$'"),
        )
    ]
    # a field before it, or a nested one, does not move it
    nested = ApiRequest(method="POST", url="/pairs", body={"n": 2, "twice": "cd-cd"})
    with PatternBudget(0.0):
        [again] = scanner.iter_findings(nested)
    assert (again.location, again.got) == (("body", "twice"), "cd-cd")


def test_a_long_pattern_is_cut_in_the_warning() -> None:
    long = r"^(\w+)-\1-(\w+)-\2-(\w+)-\3-(\w+)-\4$"  # its repr is 45 characters
    tool = {"name": "quad", "parameters": {"properties": {"q": {"pattern": long}}}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    with PatternBudget(0.0):
        [warning] = scanner.iter_findings({"name": "quad", "arguments": {"q": "a-a-b-b-c-c"}})
    assert (warning.expected, warning.message) == (
        {"pattern": long},
        "q" + WARNING.format(r"'^(\\w+)-\\1-(\\w+)-\\2-(\\w+)-\\3-(\..."),
    )


def _composed(fields: dict[str, Any], query: dict[str, Any] | None = None) -> Scanner:
    """An operation whose body is oneOf a shape of ``fields`` (beside an integer ``n``)
    and another shape, with ``query`` parameters (name -> schema)."""
    shape = {"type": "object", "properties": {"n": {"type": "integer"}, **fields}}
    other = {"type": "object", "properties": {"kind": {"const": "x"}}, "required": ["kind"]}
    post: dict[str, Any] = {
        "operationId": "addPair",
        "requestBody": {"content": {"application/json": {"schema": {"oneOf": [shape, other]}}}},
        "responses": {},
    }
    post["parameters"] = [
        {"name": name, "in": "query", "schema": schema} for name, schema in (query or {}).items()
    ]
    spec = {"openapi": "3.0.3", "info": {"title": "pairs", "version": "1"}, "paths": {}}
    spec["paths"] = {"/pairs": {"post": post}}
    return Scanner(ApiCatalog.from_obj(spec), retriever=None)


def _undecided(scanner: Scanner, body: Any, url: str = "/pairs") -> list[tuple[Any, ...]]:
    with PatternBudget(0.0):
        found = scanner.iter_findings(ApiRequest(method="POST", url=url, body=body))
        return [(f.location, f.got, f.expected) for f in found]


def test_the_warning_finds_its_field_inside_objects_lists_and_names() -> None:
    pattern = {"type": "string", "pattern": TWICE}
    scanner = _composed(
        {
            "pair": {"type": "object", "properties": {"inner": {"type": "object",
                     "properties": {"twice": pattern}}}},
            "words": {"type": "array", "items": pattern},
            "tags": {"type": "object", "propertyNames": pattern},
        }
    )  # fmt: skip
    pair = {"inner": {"twice": "ab-ab"}}
    assert _undecided(scanner, {"n": 1, "pair": pair}) == [
        (("body", "pair"), pair, {"pattern": TWICE})
    ]
    assert _undecided(scanner, {"n": 1, "words": ["ab-ab"]}) == [
        (("body", "words"), ["ab-ab"], {"pattern": TWICE})
    ]
    assert _undecided(scanner, {"n": 1, "tags": {"ab-ab": 1}}) == [
        (("body", "tags"), {"ab-ab": 1}, {"pattern": TWICE})
    ]


def test_the_warning_names_the_first_field_left_undecided_and_its_pattern() -> None:
    scanner = _composed(
        {"a": {"type": "string", "pattern": TWICE}, "b": {"type": "string", "pattern": DOUBLE}}
    )
    assert _undecided(scanner, {"n": 1, "a": "ab-ab", "b": "cc"}) == [
        (("body", "a"), "ab-ab", {"pattern": TWICE})
    ]


def _calls(scanner: Scanner, *calls: tuple[str, Any]) -> list[tuple[Any, ...]]:
    """The warnings of ``calls`` (url, body) checked in one budget of no time, as the
    proxy checks the calls of one message in one budget."""
    found = []
    with PatternBudget(0.0):
        for url, body in calls:
            for f in scanner.iter_findings(ApiRequest(method="POST", url=url, body=body)):
                found.append((f.location, f.got, f.expected))
    return found


def test_a_search_of_an_earlier_call_in_the_budget_is_not_the_bodys() -> None:
    # the same text, searched by another pattern in an earlier call of the same budget
    scanner = _composed({"a": {"type": "string", "pattern": TWICE},
                         "b": {"type": "string", "pattern": DOUBLE}})  # fmt: skip
    assert _calls(
        scanner, ("/pairs", {"n": 1, "a": "ab-ab"}), ("/pairs", {"n": 2, "b": "ab-ab"})
    ) == [
        (("body", "a"), "ab-ab", {"pattern": TWICE}),
        (("body", "b"), "ab-ab", {"pattern": DOUBLE}),
    ]


def test_past_the_budgets_record_each_warning_keeps_its_own_pattern() -> None:
    # the budget records 64 searches; the ones after them are still named rightly
    query = {f"q{i}": {"type": "string", "pattern": rf"^(\w+)-\1-{i}$"} for i in range(40)}
    scanner = _composed({"twice": {"type": "string", "pattern": TWICE}}, query)
    url = "/pairs?" + "&".join(f"q{i}=x" for i in range(40))
    found = _calls(scanner, (url, None), ("/pairs", {"n": 1, "twice": "ab-ab"}))
    assert found == [
        *((("query", f"q{i}"), "x", {"pattern": rf"^(\w+)-\1-{i}$"}) for i in range(40)),
        (("body", "twice"), "ab-ab", {"pattern": TWICE}),
    ]


@pytest.mark.parametrize("container", ["object", "array"])
def test_the_warnings_field_is_looked_for_33_levels_deep(container: str) -> None:
    # a value found 33 levels down names its field; deeper than that, the search stops
    # and the warning keeps the body's first field
    def nested(levels: int) -> tuple[dict[str, Any], Any]:
        schema: dict[str, Any] = {"type": "string", "pattern": TWICE}
        value: Any = "ab-ab"
        for _ in range(levels):
            if container == "object":
                schema, value = {"type": "object", "properties": {"x": schema}}, {"x": value}
            else:
                schema, value = {"type": "array", "items": schema}, [value]
        return schema, value

    for levels, field in ((33, "deep"), (34, "n")):
        schema, value = nested(levels)
        [(where, _, expected)] = _undecided(_composed({"deep": schema}), {"n": 1, "deep": value})
        assert (where, expected) == (("body", field), {"pattern": TWICE}), levels


def test_the_compiled_fast_path_never_accepts_a_value_left_undecided() -> None:
    # the second call of an operation is answered by its compiled validator: one whose
    # pattern search ran out of time is not "clean", it gets the warning
    properties = {"twice": {"type": "string", "pattern": TWICE}}
    tool = {"name": "pair", "parameters": {"type": "object", "properties": properties}}
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    assert list(scanner.iter_findings({"name": "pair", "arguments": {"twice": "ab-ab"}})) == []
    with PatternBudget(0.0):
        found = list(scanner.iter_findings({"name": "pair", "arguments": {"twice": "cd-cd"}}))
    assert [(f.code, f.location, f.severity) for f in found] == [
        ("E4.2", ("argument", "twice"), "warning")
    ]
