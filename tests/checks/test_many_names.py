"""A call with thousands of wrong names, or a tool with thousands of parameters, costs
time linear in its size and gets feedback of bounded size (issue 29, item 2): a message
that lists 2,000 names helps no model."""

from __future__ import annotations

import time
from typing import Any

from autofeedback import ApiCatalog, Scanner
from autofeedback.checks._check_params import MAX_LISTED, MAX_REPORTED
from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest
from autofeedback.decide._corrected import _apply, corrected_call
from autofeedback.decide._feedback import render_feedback


def _scanner(properties: int) -> Scanner:
    props: dict[str, Any] = {f"field_{i}": {"type": "string"} for i in range(properties)}
    tool = {"name": "big", "parameters": {"type": "object", "properties": props}}
    return Scanner(ApiCatalog.from_tools([tool]), retriever=None)


def test_one_wrong_name_on_a_huge_tool_gets_short_feedback() -> None:
    """20,000 parameters and one wrong argument (100,000 gave 790 KB of feedback)."""
    scanner = _scanner(20_000)
    request = ApiRequest(name="big", arguments={"field_1": "x", "zzz": 1})
    found = list(scanner.iter_findings(request))
    assert [f.code for f in found] == ["E3"]
    assert len(found[0].expected) == MAX_LISTED
    assert "and 19960 more" in found[0].message
    text = render_feedback(found)
    assert len(text) < 4000, len(text)


def test_thousands_of_wrong_names_are_reported_up_to_a_bound() -> None:
    scanner = _scanner(5_000)
    args = {f"feild_{i}": "x" for i in range(2_000)}
    args["Field_3"] = "y"  # a literal variant is still recognised among them
    found = list(scanner.iter_findings(ApiRequest(name="big", arguments=args)))
    assert len(found) == MAX_REPORTED + 1
    last = found[-1]
    assert last.code == "E3" and last.got == f"feild_{MAX_REPORTED}"
    assert f"and {2_001 - MAX_REPORTED - 1} more unknown names" in last.message
    # the first ones still get their suggestion (a spelling of a documented name)
    assert found[0].suggestion is not None and found[0].suggestion.startswith("field_")
    text = render_feedback(found)
    assert len(text) < 8000, len(text)


def test_a_call_too_wide_to_correct_gets_no_corrected_copy() -> None:
    """300,000 unknown keys: the corrected call was the model's call again (6 MB), after
    three re-checks of it (15 s)."""
    scanner = _scanner(50)
    args = {f"k{i}": i for i in range(5_000)}
    request = ApiRequest(name="big", arguments=args)
    errors = [f for f in scanner.iter_findings(request) if f.severity == "error"]
    assert corrected_call(scanner, request, errors, style="json") is None


def test_applying_many_fixes_is_linear_and_keeps_the_order() -> None:
    """Each renamed or dropped key rebuilt the whole argument dict: 4,000 keys took 8 s,
    quadratic. 15,000 here: about 2 minutes before, milliseconds now (the bound only absorbs a
    loaded machine)."""
    scanner = _scanner(3)
    n = 15_000
    args: dict[str, Any] = {f"k{i}": i for i in range(n)}
    args["feild_0"] = "x"
    errors = [Finding("E3", ("argument", f"k{i}"), f"k{i}", message="unknown") for i in range(n)]
    errors.append(
        Finding("E3.2", ("argument", "feild_0"), "feild_0", suggestion="field_0", message="x")
    )
    started = time.perf_counter()
    assert _apply("big", args, errors, scanner) == ("big", True)
    assert time.perf_counter() - started < 20
    assert args == {"field_0": "x"}


def test_renames_stay_in_place_and_holes_are_typed() -> None:
    scanner = _scanner(3)
    args: dict[str, Any] = {"a": 1, "feild_1": "x", "b": 2}
    errors = [
        Finding("E3.2", ("argument", "feild_1"), "feild_1", suggestion="field_1", message="x"),
        Finding("E3", ("argument", "a"), "a", message="unknown"),
        Finding("E3.4", ("argument", "field_2"), None, suggestion="field_2", message="missing"),
        Finding("E3", ("argument", "b"), "b", suggestion="field_0", message="unknown"),
    ]
    assert _apply("big", args, errors, scanner) == ("big", True)
    assert list(args) == ["field_1", "field_0", "field_2"]
    assert repr(args["field_2"]) == "<string>"


def test_a_schema_is_compiled_at_its_second_use_and_only_when_small() -> None:
    """jsonschema-rs compiles a tool's schema in native code at its second use (the
    first call of a plain schema is walked: checks/_quick.py); a schema of more than
    _MAX_COMPILED_VALUES values (a 30,000-value enum from one hostile log record) gets
    no compiled copy and is validated by jsonschema."""
    import jsonschema_rs

    from autofeedback.checks._check_values import (
        _MAX_COMPILED_VALUES,
        _MISSING,
        _stored,
        _strict,
        accepts,
    )

    small = _scanner(3).catalog.get("big")
    assert small is not None
    assert _stored(_strict, small) is _MISSING
    assert accepts(small, {"field_0": "x"})
    assert _stored(_strict, small) is _MISSING
    assert accepts(small, {"field_0": "y"})
    assert type(_stored(_strict, small)).__module__ == jsonschema_rs.__name__
    values = [f"v{i}" for i in range(_MAX_COMPILED_VALUES + 10_000)]
    tool = {
        "name": "big",
        "parameters": {
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": values}},
        },
    }
    large = ApiCatalog.from_tools([tool]).get("big")
    assert large is not None
    assert accepts(large, {"kind": "v7"})
    assert not accepts(large, {"kind": "nope"})
    assert type(_stored(_strict, large)).__module__ != jsonschema_rs.__name__
