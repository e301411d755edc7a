"""Audit inputs: HAR captures and OpenAI chat-completion logs become audit records."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from autofeedback.audit import _inputs
from autofeedback.audit._inputs import (
    har_request,
    openai_records,
    read_har,
    read_openai,
    sniff_format,
)
from autofeedback.cli import run

DATA = Path(__file__).parents[1] / "data"
HAR = DATA / "audit" / "movies.har"
CHAT = DATA / "audit" / "chat.jsonl"
MOVIES = str(DATA / "scan" / "movies.json")
TOOLS = str(DATA / "scan" / "tools.json")


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("x.har", "", "har"),
        ("x.HAR", "{}", "har"),
        ("-", '{\n  "log": {\n    "version": "1.2",', "har"),
        ("x.json", '{"log": {"entries": []}}', "har"),
        ("x.jsonl", '{"id": 1, "request": {"method": "GET", "url": "/x"}}', "jsonl"),
        ("x.jsonl", '{"request": {"messages": []}, "response": {"choices": []}}', "openai"),
        ("x.jsonl", '{"custom_id": "a", "response": {"body": {}}}', "openai"),
        ("x.jsonl", '\n\n{"body": {"messages": []}}', "openai"),
        ("x.jsonl", "not json at all", "jsonl"),
        ("-", "", "jsonl"),
        # issue 30: a chat trace record is a record, not a chat-completion log line
        ("x.jsonl", '{"id": "t", "tools": [], "messages": [{"role": "user"}]}', "jsonl"),
        ("x.jsonl", '{"messages": [], "choices": []}', "openai"),
    ],
)
def test_sniff_format(name: str, head: str, expected: str) -> None:
    assert sniff_format(name, head) == expected


def test_har_entries_become_request_records() -> None:
    with HAR.open() as f:
        units = list(read_har(f))
    assert [u.id for u in units] == [1, 2, 3, 4, 5]
    first = units[0].record
    assert first["request"]["url"].endswith("/search/movie?query=Alien&page=2")
    assert "params" not in first["request"]  # the query is in the URL: never counted twice
    # credentials are redacted, HTTP/2 pseudo-headers dropped
    assert first["request"]["headers"] == {"Authorization": "[REDACTED]"}
    assert units[2].record["request"]["json"] == {"name": "Sci-fi", "public": "yes"}
    assert units[4].record is None and "no 'request'" in (units[4].error or "")
    # line numbers point at each entry's opening brace
    lines = HAR.read_text().splitlines()
    for unit in units:
        assert lines[unit.line - 1].strip() == "{"


def test_har_reading_is_the_same_with_tiny_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    with HAR.open() as f:
        whole = list(read_har(f))
    monkeypatch.setattr(_inputs, "_CHUNK", 5)
    with HAR.open() as f:
        assert list(read_har(f)) == whole


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "expected '{'"),
        ('{"foo": 1}', "no 'log'"),
        ('{"log": {"version": "1.2"}}', "no 'entries'"),
        ("[1, 2]", "expected '{'"),
    ],
)
def test_not_a_har_is_one_error_unit(text: str, error: str) -> None:
    units = list(read_har(io.StringIO(text)))
    assert len(units) == 1 and error in (units[0].error or "")


def test_truncated_har_keeps_entries_read_and_reports_the_rest() -> None:
    text = HAR.read_text()
    cut = text.index('"startedDateTime": "2026-11-01T10:00:02')
    units = list(read_har(io.StringIO(text[:cut])))
    assert [u.error is None for u in units] == [True, True, False]
    assert "rest of the file was not read" in (units[2].error or "")


def test_har_post_bodies() -> None:
    def post(mime: str, **extra: Any) -> dict[str, Any]:
        entry = {
            "request": {"method": "POST", "url": "/x", "postData": {"mimeType": mime, **extra}}
        }
        return har_request(entry)

    assert post("application/x-www-form-urlencoded", text="a=1&b=")["data"] == {"a": "1", "b": ""}
    assert post("multipart/form-data", params=[{"name": "f", "value": "v"}])["data"] == {"f": "v"}
    assert post("application/json", text="{oops")["data"] == "{oops"
    assert post("text/plain", text="hello")["data"] == "hello"
    assert har_request(
        {"request": {"method": "GET", "url": "/x", "queryString": [{"name": "q", "value": "1"}]}}
    )["params"] == {"q": "1"}


def test_har_audit_through_the_cli() -> None:
    code, out, _ = cli("audit", str(HAR), "--spec", MOVIES, "--no-semantic", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0] == {"id": 1, "ok": True, "findings": []}
    assert [f["code"] for f in rows[1]["findings"]] == ["E3", "E3.4", "E4.1"]
    assert [f["code"] for f in rows[2]["findings"]] == ["E4.1"]
    assert "SECRET" not in out and "error" in rows[4]
    assert code == 2


def test_har_from_stdin_by_content() -> None:
    code, out, _ = cli(
        "audit", "-", "--spec", MOVIES, "--no-semantic", "--format", "jsonl", stdin=HAR.read_text()
    )
    assert len(out.splitlines()) == 5 and code == 2


def test_openai_records_shapes() -> None:
    lines = CHAT.read_text().splitlines()
    units = list(read_openai(lines))
    ids = [u.id for u in units]
    assert ids == [
        "chatcmpl-1",
        "chatcmpl-2#1",
        "chatcmpl-2#2",
        "chatcmpl-3",
        "task-4",
        5,
        "task-6",
        None,
    ]
    first = units[0].record
    assert first["instruction"] == "Weather in Paris for 3 days?"
    assert first["tools"][0]["function"]["name"] == "userLogin"
    assert first["call"]["function"]["name"] == "get_weather"
    assert units[1].line == units[2].line == 2  # two tool calls of one line
    assert units[3].record["instruction"] == "Weather in Oslo in fahrenheit"  # {"body": ...}
    assert "tools" not in units[4].record  # batch output: tools come from --spec
    assert units[5].record["output"] == "Hello! How can I help?"
    assert "Rate limit" in (units[6].error or "")
    assert "not valid JSON" in (units[7].error or "") and units[7].line == 7


def test_openai_variants() -> None:
    reply = {"choices": [{"message": {"function_call": {"name": "f", "arguments": "{}"}}}]}
    flat = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], **reply}
    (record,) = openai_records(flat, 1)
    assert record["instruction"] == "hi" and record["call"]["name"] == "f"
    bad_lines: list[tuple[dict[str, Any], str]] = [
        ({"request": {}}, "no chat-completion"),
        ({"response": {}}, "no 'choices'"),
    ]
    for bad, why in bad_lines:
        with pytest.raises(ValueError, match=why):
            openai_records(bad, 1)
    assert [u.error for u in read_openai(["", "[1]"])] == [
        "chat log: line is not a JSON object",
    ]


def test_openai_audit_through_the_cli() -> None:
    code, out, _ = cli("audit", str(CHAT), "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) == 8 and code == 2
    assert rows[0]["ok"] is True
    assert rows[1]["findings"][0]["code"] == "E2.2"
    assert rows[3]["findings"][0]["code"] == "E4.2"
    assert rows[5]["findings"][0]["code"] == "E1"
    forced = cli("audit", str(CHAT), "--input-format", "jsonl", "--spec", TOOLS, "--no-semantic")
    # read as the record contract, each line fails and says how to read it
    assert "audit the log with --input-format openai" in forced[1]


def test_har_reader_memory_is_bounded_by_an_entry_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reader holds about one read chunk (and the entry being decoded): with 64 KiB
    # reads, an 11 MB capture must be read in well under 1 MB
    monkeypatch.setattr(_inputs, "_CHUNK", 64 * 1024)
    entry = {
        "startedDateTime": "2026-11-01T10:00:00Z",
        "request": {
            "method": "GET",
            "url": "https://api.movies.test/3/movie/latest",
            "headers": [{"name": "Accept", "value": "application/json"}] * 4,
        },
        "response": {"status": 200, "content": {"text": "x" * 200}},
    }
    path = tmp_path / "big.har"
    body = json.dumps(entry)
    with path.open("w") as f:
        f.write('{"log": {"version": "1.2", "entries": [\n')
        f.write(",\n".join([body] * 20_000))
        f.write("\n]}}\n")
    size = path.stat().st_size
    assert size > 10_000_000
    tracemalloc.start()
    try:
        with path.open() as f:
            count = sum(1 for u in read_har(f) if u.error is None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < 1_000_000, f"peak {peak} bytes reading a {size}-byte HAR"


def test_a_chat_trace_record_first_is_read_as_records(tmp_path: Path) -> None:
    # issue 30: the README's chat record as the first line made auto-detection read the
    # whole file as an OpenAI chat-completion log: every line "bad input", exit 2
    chat = {
        "id": "chat",
        "messages": [
            {"role": "user", "content": "Show me Dune"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "getBook", "arguments": '{"bookId": "<book_id>"}'},
                    }
                ],
            },
        ],
    }
    call = {"id": "call", "call": {"name": "searchBooks", "arguments": {"query": "Dune"}}}
    log = tmp_path / "mixed.jsonl"
    log.write_text(json.dumps(chat) + "\n" + json.dumps(call) + "\n")
    spec = str(Path(__file__).parents[2] / "specs" / "examples" / "bookshop.yaml")
    code, out, _ = cli("audit", str(log), "--spec", spec, "--no-semantic", "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert [(r["id"], r.get("error")) for r in rows] == [("chat", None), ("call", None)]
    assert [f["code"] for f in rows[0]["findings"]] == ["E5.3"] and code == 1
    # forced the wrong way, each line says which format reads it
    (unit,) = read_openai([json.dumps(chat)])
    assert unit.error is not None and "--input-format jsonl" in unit.error


def test_a_line_cut_inside_a_string_says_where_once(tmp_path: Path) -> None:
    log = tmp_path / "cut.jsonl"
    log.write_text('{"id": 1, "call": {"name": "f", "arguments": "x\n', encoding="utf-8")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"request": {"messages": []}, "response": {"choices": "x\n', encoding="utf-8")
    for path, fmt in ((log, "jsonl"), (chat, "openai")):
        out, err = io.StringIO(), io.StringIO()
        run(["audit", str(path), "--input-format", fmt, "--no-semantic", "--format", "jsonl",
             "--spec", TOOLS], stdout=out, stderr=err)  # fmt: skip
        assert json.loads(out.getvalue())["error"] == (
            "not valid JSON: Unterminated string starting at column "
            + ("46" if fmt == "jsonl" else "55")
        )
