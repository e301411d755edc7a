"""Isolation per record: whatever one record does, it becomes that record's own result
and the audit goes on (issue 9). The same for the scanner API, the HTTP guard and the
pytest plugin.

Two kinds of test: the reproductions from the issue, on real inputs, and fault
injection (a check made to raise) for the contract itself, which must hold for bugs
nobody has found yet."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
import requests

from autofeedback import ApiCatalog, Scanner
from autofeedback.audit._audit import audit_lines
from autofeedback.audit._inputs import read_har
from autofeedback.cli import run
from autofeedback.core._findings import Finding
from autofeedback.integrations._adapter import RequestRejected, guard_session
from autofeedback.serve._sandbox import Sandbox

pytest_plugins = ["pytester"]

BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
IPV6 = {"output": "curl -X POST http://1[27.0.0.1:8080/orders"}
GOOD = {"call": {"name": "searchBooks", "arguments": {"query": "dune"}}}
BAD = {"call": {"name": "searchBooks", "arguments": {"query": "dune", "limt": 5}}}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


def write_log(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def broken_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: checking any request to ``createOrder`` raises, as a bug would."""
    original = Scanner.check_operation

    def check_operation(self: Scanner, op: Any, *args: Any, **kwargs: Any) -> Iterator[Finding]:
        if op.name == "createOrder":
            raise RuntimeError("injected failure\nwith a second line")
        return original(self, op, *args, **kwargs)

    monkeypatch.setattr(Scanner, "check_operation", check_operation)


# -- the audit -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "junit", "sarif", "html"])
def test_the_issue_record_no_longer_loses_the_audit(tmp_path: Path, fmt: str) -> None:
    log = write_log(tmp_path / "log.jsonl", [IPV6, GOOD, BAD])
    code, out, err = cli(
        "audit", str(log), "--spec", str(BOOKSHOP), "--no-semantic", "--format", fmt
    )
    assert "Traceback" not in out + err and err == ""
    assert code == 1  # findings, and no record the audit could not check (that is 2)
    if fmt == "jsonl":
        results = [json.loads(line) for line in out.splitlines()]
        assert [r["id"] for r in results] == [1, 2, 3]
        # the bracketed host is the record's own E1 finding, not an error of the audit
        assert "error" not in results[0]
        [finding] = results[0]["findings"]
        assert (finding["code"], finding["severity"], finding["location"]) == ("E1", "error", [])
        assert finding["message"] == (
            "looks like a curl command but the URL 'http://1[27.0.0.1:8080/orders' is not "
            "valid: Invalid IPv6 URL"
        )
        assert results[1] == {"id": 2, "ok": True, "findings": []}
        assert [f["code"] for f in results[2]["findings"]] == ["E3"]


def test_a_record_that_breaks_a_check_is_its_own_error(tmp_path: Path, broken_check: None) -> None:
    order = {"call": {"name": "createOrder", "arguments": {"book_id": 7, "quantity": 1}}}
    log = write_log(tmp_path / "log.jsonl", [GOOD, order, BAD, order])
    code, out, err = cli(
        "audit", str(log), "--spec", str(BOOKSHOP), "--no-semantic", "--format", "jsonl"
    )
    results = [json.loads(line) for line in out.splitlines()]
    assert code == 2 and err == ""
    assert [r["ok"] for r in results] == [True, False, False, False]
    assert results[1] == {
        "id": 2,
        "ok": False,
        "error": "the record could not be checked: RuntimeError: injected failure with a "
        "second line",
    }
    assert results[2]["findings"][0]["code"] == "E3"  # the audit went on
    assert results[3]["error"] == results[1]["error"]


def test_records_of_any_shape_each_get_one_result(bookshop: ApiCatalog) -> None:
    lines = [
        json.dumps(IPV6),
        "[" * 100_000,
        json.dumps({"id": {"nested": [1]}, **GOOD}),
        json.dumps({"tools": [{"name": 7}], **GOOD}),
        json.dumps({"tools": {"a": "b"}, "output": "x"}),
        json.dumps({"call": {"name": "searchBooks", "arguments": "[" * 5000}}),
        json.dumps({"output": "\ud800 <API>searchBooks(query='\x00')</API>"}),
        "\x00\x00",
        "",  # a blank line is no record: skipped (issue 19)
    ]
    results = list(audit_lines(lines, bookshop, retriever=None))
    assert [r.line for r in results] == list(range(1, len(lines)))
    assert all(r.error is None or "\n" not in r.error for r in results)
    assert results[2].id == 3  # an id a report cannot show falls back to the line number


def test_an_unwritable_character_does_not_stop_the_report(tmp_path: Path) -> None:
    lone = {"id": "a\ud800b", "output": "GET /books?query=\udfff"}
    log = write_log(tmp_path / "log.jsonl", [lone, GOOD])
    report = tmp_path / "report.jsonl"
    code, _, err = cli(
        "audit",
        str(log),
        "--spec",
        str(BOOKSHOP),
        "--no-semantic",
        "--format",
        "jsonl",
        "-o",
        str(report),
    )
    lines = report.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and err == ""
    # both records are right (a lone surrogate is a string like any other): written,
    # escaped, and the audit is clean
    assert code == 0
    assert json.loads(lines[0]) == {"id": "a\ud800b", "ok": True, "findings": []}
    assert json.loads(lines[1]) == {"id": 2, "ok": True, "findings": []}


def test_a_har_broken_part_way_keeps_every_entry_before_the_break(tmp_path: Path) -> None:
    entry = {"request": {"method": "GET", "url": "http://127.0.0.1:8080/books?query=dune"}}
    text = json.dumps({"log": {"version": "1.2", "entries": [entry, entry, entry]}})
    cut = text.rindex('{"request"') + 25  # inside the third entry
    har = tmp_path / "cut.har"
    har.write_text(text[:cut], encoding="utf-8")
    units = list(read_har(io.StringIO(text[:cut])))
    assert [u.error is None for u in units] == [True, True, False]
    assert "the rest of the file was not read" in (units[2].error or "")
    code, out, _ = cli(
        "audit", str(har), "--spec", str(BOOKSHOP), "--no-semantic", "--format", "jsonl"
    )
    assert code == 2
    assert [json.loads(line)["ok"] for line in out.splitlines()] == [True, True, False]


# -- the scanner API -------------------------------------------------------------------


def test_iter_findings_turns_any_failure_into_an_e1_finding(
    bookshop: ApiCatalog, broken_check: None
) -> None:
    scanner = Scanner(bookshop, retriever=None)
    [f] = scanner.iter_findings("<API>createOrder(book_id=7, quantity=1)</API>")
    assert f.code == "E1" and f.severity == "error"
    assert f.message == (
        "the output could not be checked: RuntimeError: injected failure with a second line"
    )
    with pytest.raises(RuntimeError):
        list(scanner.iter_findings({"name": "createOrder", "arguments": {}}, on_error="raise"))


# each issue input, and the one finding it must draw: (code, location, start of message)
ISSUE_INPUTS: list[tuple[Any, tuple[str, tuple[str, ...], str]]] = [
    (IPV6["output"], ("E1", (), "looks like a curl command but the URL 'http://1[27.0.0.1")),
    ("(" * 100_000, ("E1", (), "no API request found in the output")),
    ("<API>" * 10_000, ("E1", (), "looks like an <API> call but the tag is empty")),
    (
        {"method": "GET", "url": "http://[::1/books"},
        ("E1", (), "the URL 'http://[::1/books' is not valid: Invalid IPv6 URL"),
    ),
    (
        {"method": "GET", "url": "http://127.0.0.1:99999/books"},
        ("E2", ("url",), "host '127.0.0.1:99999' is not a server of this API"),
    ),
    (
        {"name": "searchBooks", "arguments": {"query": {"a": [1] * 10}}},
        ("E4.1", ("argument", "query"), "query must be a string"),
    ),
    (
        {"role": "assistant", "tool_calls": [{"function": {"name": 7, "arguments": "{"}}]},
        ("E1", (), "looks like an OpenAI tool call but the function name under 'name' must"),
    ),
    (
        {"name": "searchBooks", "arguments": "not json"},
        ("E1", (), "the arguments of 'searchBooks' are not valid JSON"),
    ),
]


@pytest.mark.parametrize(("output", "expected"), ISSUE_INPUTS)
def test_iter_findings_never_raises_on_the_issue_inputs(
    bookshop: ApiCatalog, output: Any, expected: tuple[str, tuple[str, ...], str]
) -> None:
    findings = list(Scanner(bookshop, retriever=None).iter_findings(output))
    assert all(isinstance(f, Finding) for f in findings)
    [finding] = findings  # one error, not none: a bad output is never reported clean
    code, location, message = expected
    assert (finding.code, finding.location, finding.severity) == (code, location, "error")
    assert finding.message.startswith(message), finding.message


# -- the HTTP guard and the pytest plugin ----------------------------------------------


def test_the_guard_reports_a_request_it_cannot_check(
    bookshop: ApiCatalog, terse_bookshop: Sandbox, broken_check: None
) -> None:
    seen = len(terse_bookshop.requests_seen)
    with requests.Session() as s:
        guard_session(s, bookshop, base_url=terse_bookshop.url)
        with pytest.raises(RequestRejected) as info:
            s.post(terse_bookshop.url + "/orders", json={"book_id": 7, "quantity": 1})
        # the next request is checked as usual
        assert s.get(terse_bookshop.url + "/books", params={"query": "x"}).status_code == 200
    assert [f.code for f in info.value.findings] == ["E1"]
    assert "could not be checked: RuntimeError" in str(info.value)
    assert len(terse_bookshop.requests_seen) == seen + 1  # the broken one was not sent


def test_a_malformed_call_fails_its_test_not_the_session(
    pytester: pytest.Pytester, terse_bookshop: Sandbox
) -> None:
    spec = BOOKSHOP.read_text().replace("http://127.0.0.1:8080", terse_bookshop.url)
    pytester.makefile(".yaml", api=spec)
    pytester.makepyfile(
        f"""
        import requests
        SERVER = {terse_bookshop.url!r}

        def test_malformed_url():
            requests.get(SERVER + "/books/%zz/" + "[" * 3000, params={{"query": "\\x00"}})

        def test_misspelled():
            requests.get(SERVER + "/books", params={{"query": "dune", "limt": 5}})

        def test_good():
            assert requests.get(SERVER + "/books", params={{"query": "dune"}}).status_code == 200
        """
    )
    installed = any(
        ep.value == "autofeedback.pytest_plugin" for ep in entry_points(group="pytest11")
    )
    plugin = [] if installed else ["-p", "autofeedback.pytest_plugin"]
    result = pytester.runpytest_inprocess(*plugin, "--autofeedback-spec", "api.yaml")
    result.assert_outcomes(passed=1, failed=2)
    text = result.stdout.str()
    assert "INTERNALERROR" not in text
    assert "broke the API docs" in text


def test_a_result_the_output_cannot_take_becomes_its_error_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", [{"id": "für", **GOOD}, GOOD])
    raw = io.BytesIO()
    strict = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    args = ["audit", str(log), "--spec", str(BOOKSHOP), "--no-semantic", "--format", "jsonl"]
    code = run(args, stdout=strict, stderr=io.StringIO(), stdin=io.StringIO(""))
    strict.flush()
    lines = [json.loads(line) for line in raw.getvalue().decode("ascii").splitlines()]
    assert code == 2
    assert lines[0]["ok"] is False and "could not be reported" in lines[0]["error"]
    assert lines[1] == {"id": 2, "ok": True, "findings": []}
