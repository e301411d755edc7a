"""The static scanner on data-driven cases (tests/data/scan/cases.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Finding, Scanner, iter_findings, render_feedback, scan

DATA = Path(__file__).parents[1] / "data" / "scan"
CASES = json.loads((DATA / "cases.json").read_text())
CATALOGS = {
    "tools": ApiCatalog.from_file(DATA / "tools.json"),
    "movies": ApiCatalog.from_file(DATA / "movies.json"),
}


def _input(case: dict[str, Any]) -> Any:
    for key in ("output", "call", "request"):
        if key in case:
            return case[key]
    raise AssertionError(case)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any], api_retriever: Any) -> None:
    retriever = api_retriever if case.get("semantic", True) else None
    scanner = Scanner(CATALOGS[case["spec"]], retriever=retriever)
    findings = list(scanner.iter_findings(_input(case), instruction=case.get("instruction")))
    assert [f.code for f in findings] == case["codes"], [str(f) for f in findings]
    first = scanner.scan(_input(case), instruction=case.get("instruction"))
    if case["codes"]:
        assert first is not None
        assert first.code == case.get("first", case["codes"][0])
        if "suggestion" in case:
            assert first.suggestion == case["suggestion"]
        if "location" in case:
            assert list(first.location) == case["location"]
        # every finding renders to one actionable line and to JSON
        for f in findings:
            assert "\n" not in str(f)
            json.dumps(f.as_dict())
    else:
        assert first is None


def test_paper_order_first_error_wins() -> None:
    catalog = CATALOGS["tools"]
    found = scan("<API>get_weather(City='Paris', days='x')</API>", catalog, retriever=None)
    assert found is not None and found.code == "E3.2"


def test_unknown_api_stops_before_parameter_checks() -> None:
    found = list(iter_findings("<API>bookRoom(zzz=1)</API>", CATALOGS["tools"], retriever=None))
    assert [f.code for f in found] == ["E2"]


def test_a_name_in_other_words_has_its_arguments_checked_at_once() -> None:
    # issue 40: the one API the name means (same words, another case) judges the
    # arguments in the same round, not one feedback round later
    found = list(iter_findings("<API>getWeather(zzz=1)</API>", CATALOGS["tools"], retriever=None))
    assert [(f.code, f.location) for f in found] == [
        ("E2.2", ("api",)),
        ("E3", ("argument", "zzz")),
        ("E3.4", ("argument", "city")),
    ]


def test_e2_1_is_a_warning_when_retriever_is_not_confident(api_retriever: Any) -> None:
    scanner = Scanner(CATALOGS["tools"], retriever=api_retriever, confident_margin=10.0)
    found = scanner.scan(
        "<API>get_weather(city='Paris')</API>", instruction="Email bob that the meeting moved"
    )
    assert found is not None and found.code == "E2.1" and found.severity == "warning"


def test_well_formed_call_never_loads_a_model() -> None:
    scanner = Scanner(CATALOGS["tools"])  # retriever="auto": created only when needed
    assert scanner.scan("<API>get_weather(city='Paris')</API>") is None
    assert scanner._retriever == "auto"


@pytest.mark.parametrize("code", ["E1", "E2.2", "E3.4", "E4.1"])
def test_feedback_has_the_five_parts(code: str) -> None:
    finding = Finding(
        code,
        ("argument", "x"),
        "got",
        expected="integer",
        suggestion="x",
        message="something is wrong",
    )
    text = render_feedback(finding)
    lines = text.splitlines()
    assert lines[0] == "There is an error in your API request."
    assert code in lines[1] and "something is wrong" in lines[1]
    assert "Likely cause:" in text and "Correction:" in text
    assert lines[-1] == "Please regenerate the API request."
    if code != "E1":
        assert "parsed successfully" in text


def test_finding_is_frozen_and_validates_code() -> None:
    f = Finding("E3.2", ("query", "limt"), "limt", suggestion="limit", message="unknown")
    with pytest.raises(AttributeError):
        f.code = "E1"  # type: ignore[misc]
    with pytest.raises(ValueError):
        Finding("E9", (), None)
    assert str(f) == "E3.2 query.limt: unknown — did you mean 'limit'?"


def test_hostile_outputs_give_e1_not_a_traceback() -> None:
    catalog = CATALOGS["tools"]
    for text in [
        "[" * 100_000,
        "get_weather(" + "a" * 2_000_000 + ")",
        "\x00\udcff",
        "<API>get_weather(city=lambda: 1)</API>",
        "{" * 50_000 + '"a"',
    ]:
        found = scan(text, catalog, retriever=None)
        assert found is not None and found.code == "E1"


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("titel", "title"), ("citty", "city"), ("stauts", "status"), ("auhtor", "author")],
)
def test_a_typo_in_a_parameter_name_says_which_one_it_is(typo: str, meant: str) -> None:
    # issue 30: a transposed or doubled letter was a bare E3 listing every documented name
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "add_book",
                "parameters": {
                    "type": "object",
                    "properties": {
                        k: {"type": "string"}
                        for k in ("title", "city", "stats", "status", "author")
                    },
                },
            }
        ]
    )
    (f,) = Scanner(catalog, retriever=None).iter_findings(f"add_book({typo}='x')")
    assert (f.code, f.suggestion) == ("E3", meant)
    assert f"did you mean {meant!r}?" in str(f)
    assert f"Replace {typo!r} with the documented parameter {meant!r}" in render_feedback(f)


def test_a_typo_in_an_api_name_says_which_one_it_is() -> None:
    catalog = ApiCatalog.from_tools(
        [{"name": n, "parameters": {"type": "object"}} for n in ("searchBooks", "getBook")]
    )
    # the one name it is a slip of judges its arguments too (issue 40): `query` is not
    # documented there
    f, other = Scanner(catalog, retriever=None).iter_findings("searchBoosk(query='dune')")
    assert (f.code, f.suggestion) == ("E2", "searchBooks")
    assert (other.code, other.location) == ("E3", ("argument", "query"))
    assert "did you mean 'searchBooks'?" in str(f)


def test_a_hyphenated_tool_name_written_as_a_python_call(api_retriever: Any) -> None:
    # issue 30: `get-weather(town='Paris')` was read as a call of `weather` (E2)
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "get-weather",
                "parameters": {
                    "type": "object",
                    "required": ["city"],
                    "properties": {"city": {"type": "string"}},
                },
            }
        ]
    )
    findings = list(
        Scanner(catalog, retriever=api_retriever).iter_findings("get-weather(town='Paris')")
    )
    assert [(f.code, f.suggestion) for f in findings] == [("E3.3", "city"), ("E3.4", "city")]
