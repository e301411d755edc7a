"""Log bytes that must not move records around (issue 18): a bare ``\\r`` inside a record,
a UTF-8 byte-order mark before the first one; for files, stdin and both engines."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest

from autofeedback.audit._audit import _MAX_KEPT_TOOLS, _CatalogCache, audit_lines
from autofeedback.cli import run

DATA = Path(__file__).parents[1] / "data"
HAR = DATA / "audit" / "movies.har"
CHAT = DATA / "audit" / "chat.jsonl"
TOOLS = str(DATA / "scan" / "tools.json")
MOVIES = str(DATA / "scan" / "movies.json")

GOOD = '{"id": "a", "call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
# a bare CR between two tokens of one record (JSON whitespace), then one inside a string
CR = '{"id": "b",\r "call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
CR_IN_STRING = '{"id": "c", "call": {"name": "get_weather", "arguments": {"city": "Pa\rris"}}}'


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def rows(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_bare_cr_neither_splits_a_record_nor_shifts_line_numbers(
    tmp_path: Path, engine: str
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes("\n".join([CR, CR_IN_STRING, "oops", GOOD]).encode() + b"\n")
    extra = ["--dask-scheduler", "synchronous"] if engine == "dask" else []
    _, out, _ = cli(
        "audit",
        str(log),
        "--spec",
        TOOLS,
        "--no-semantic",
        "--format",
        "jsonl",
        "--engine",
        engine,
        *extra,
    )
    got = rows(out)
    assert [r["id"] for r in got] == ["b", 2, 3, "a"]  # an unreadable line: its number
    assert got[0] == {"id": "b", "ok": True, "findings": []}
    assert "error" in got[1] and "error" in got[2]
    assert got[3] == {"id": "a", "ok": True, "findings": []}


def test_a_bare_cr_on_stdin_is_read_like_a_file() -> None:
    _, out, _ = cli(
        "audit",
        "-",
        "--spec",
        TOOLS,
        "--no-semantic",
        "--format",
        "jsonl",
        stdin=CR + "\n" + GOOD + "\n",
    )
    assert [r["id"] for r in rows(out)] == ["b", "a"]


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_bom_before_the_first_jsonl_record(tmp_path: Path, engine: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + (GOOD + "\n" + GOOD + "\n").encode())
    extra = ["--dask-scheduler", "synchronous"] if engine == "dask" else []
    code, out, _ = cli(
        "audit",
        str(log),
        "--spec",
        TOOLS,
        "--no-semantic",
        "--format",
        "jsonl",
        "--engine",
        engine,
        *extra,
    )
    assert rows(out) == [{"id": "a", "ok": True, "findings": []}] * 2 and code == 0


def test_a_bom_on_stdin() -> None:
    code, out, _ = cli(
        "audit",
        "-",
        "--spec",
        TOOLS,
        "--no-semantic",
        "--format",
        "jsonl",
        stdin="\ufeff" + GOOD + "\n",
    )
    assert rows(out) == [{"id": "a", "ok": True, "findings": []}] and code == 0


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_bom_before_a_har(tmp_path: Path, via: str) -> None:
    har = tmp_path / "capture.har"
    har.write_bytes(b"\xef\xbb\xbf" + HAR.read_bytes())
    args = ("--spec", MOVIES, "--no-semantic", "--format", "jsonl")
    if via == "file":
        _, out, _ = cli("audit", str(har), *args)
    else:
        _, out, _ = cli("audit", "-", *args, stdin=har.read_text(encoding="utf-8"))
    assert [r["id"] for r in rows(out)] == [1, 2, 3, 4, 5]
    assert rows(out)[0] == {"id": 1, "ok": True, "findings": []}


def test_a_bom_before_an_openai_chat_log(tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + CHAT.read_bytes())
    _, plain, _ = cli("audit", str(CHAT), "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    _, out, _ = cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    assert out == plain and out.count("\n") == plain.count("\n")


# -- a hostile per-record `tools` list ---------------------------------------------------------


def _enum_record(n: int, rid: int = 0, value: str = "") -> str:
    values = [f"value-{rid}-{k}" for k in range(n)]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "pick",
                "parameters": {
                    "type": "object",
                    "properties": {"v": {"type": "string", "enum": values}},
                    "required": ["v"],
                },
            },
        }
    ]
    call = {"name": "pick", "arguments": {"v": value or f"value-{rid}-{n - 1}"}}
    return json.dumps({"id": rid, "tools": tools, "call": call})


def test_a_100000_value_enum_in_a_record_costs_no_compiled_validator() -> None:
    # compiling the fast path's validator for it took 987 MB (peak RSS)
    lines = [_enum_record(100_000), _enum_record(100_000, value="nope")]
    tracemalloc.start()
    try:
        results = list(audit_lines(lines, None, retriever=None))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.ok for r in results] == [True, False]
    assert results[1].findings[0].code == "E4.2"
    assert peak < 120 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_distinct_big_tool_lists_are_not_all_kept() -> None:
    # the per-record tools cache held up to 1,024 catalogs whatever their size
    cache = _CatalogCache(None, retriever=None)
    for rid in range(16):
        tools = json.loads(_enum_record(80_000, rid))["tools"]  # about 1.5 MB each
        cache.scanner(tools)
        assert cache._kept <= _MAX_KEPT_TOOLS
    assert 0 < len(cache._scanners) < 16


@pytest.mark.parametrize(("junk", "what"), [("junk", "a string"), (3, "a number"), (None, "null")])
def test_a_tool_call_that_is_no_object_is_that_steps_e1(junk: object, what: str) -> None:
    # it was "the record could not be checked: AttributeError: 'str' object has no
    # attribute 'name'", an internal error's words
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    record = {
        "id": "r1",
        "tools": [tool],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [junk]},
        ],
    }
    (result,) = audit_lines([json.dumps(record)], None, retriever=None)
    assert result.error is None
    assert [(f.code, f.location) for f in result.findings] == [("E1", ("step[0]",))]
    assert result.findings[0].message.endswith(f"a call must be a JSON object, got {what}")
