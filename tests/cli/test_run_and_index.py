"""`autofeedback index build` and `autofeedback run`, in-process, against the real
sandbox on 127.0.0.1 (the model is a replay of recorded outputs)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from autofeedback.cli import run
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "examples" / "bookshop.yaml"
REPLAY = ROOT / "specs" / "examples" / "demo-replay.txt"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return run(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_index_build_then_reuse(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "errors.md").write_text("# Errors\n\ninfo_code 99999 means the shop is closed.\n")
    target = tmp_path / "index"
    code, out, err = cli(
        "index", "build", "--spec", str(SPEC), "--docs", str(docs), "-o", str(target)
    )
    assert code == 0, err
    assert (target / "manifest.json").is_file() and "chunks" in out
    before = (target / "manifest.json").stat().st_mtime_ns
    assert (
        cli("index", "build", "--spec", str(SPEC), "--docs", str(docs), "-o", str(target))[0] == 0
    )
    assert (target / "manifest.json").stat().st_mtime_ns == before  # unchanged: not rebuilt


def test_index_build_missing_docs_is_bad_input(tmp_path: Path) -> None:
    code, _, err = cli(
        "index", "build", "--spec", str(SPEC), "--docs", "nope", "-o", str(tmp_path / "i")
    )
    assert code == 2 and "no such file" in err


def test_run_replays_the_whole_round_trip(terse_bookshop: Sandbox, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    code, out, err = cli(
        "run",
        "--spec",
        str(SPEC),
        "--instruction",
        "Find science books after 2020",
        "--llm",
        f"replay:{REPLAY}",
        "--base-url",
        terse_bookshop.url,
        "--max-static",
        "1",
        "--trace",
        str(trace),
        "--repair",
        "off",  # the paper's loop: the misspelt name goes back to the model
    )
    assert code == 0, out + err
    assert "E2.2" in out and "20002" in out and "success" in out
    assert "YYYY-MM-DD" in out  # the explanation retrieved from the docs is shown
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    assert rows[-1]["summary"] and rows[-1]["success"] and len(rows) == 4


def test_run_repairs_what_is_certain_and_sends_it(terse_bookshop: Sandbox, tmp_path: Path) -> None:
    """The default ``--repair sure``: the misspelt API name is repaired and sent, no
    second model call; the trace and the printed attempt show the repair."""
    trace = tmp_path / "trace.jsonl"
    code, out, err = cli(
        "run",
        "--spec",
        str(SPEC),
        "--instruction",
        "Find science books",
        "--llm",
        f"replay:{REPLAY}",
        "--base-url",
        terse_bookshop.url,
        "--trace",
        str(trace),
    )
    assert code == 0, out + err
    assert "after 1 attempt(s)" in out and "repaired" in out
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    first = rows[0]
    assert first["repairs"] == [
        {"code": "E2.2", "location": ["api"], "before": "search_books", "after": "searchBooks"}
    ]
    assert first["findings"][0]["fix"] == {"before": "search_books", "after": "searchBooks"}
    assert "/books?query=science" in first["sent"]["url"]
    assert rows[-1]["success"] and rows[-1]["request"]["name"] == "searchBooks"


def test_run_refuses_a_host_outside_the_spec(terse_bookshop: Sandbox, tmp_path: Path) -> None:
    replay = tmp_path / "r.txt"
    replay.write_text(
        "GET http://198.51.100.7/books?query=x\n---\nGET http://198.51.100.7/books?query=x\n"
    )
    code, out, _ = cli(
        "run",
        "--spec",
        str(SPEC),
        "--instruction",
        "x",
        "--llm",
        f"replay:{replay}",
        "--base-url",
        terse_bookshop.url,
        "--max-static",
        "1",
    )
    assert code == 1 and "failed" in out
    assert "198.51.100.7" in out and "HTTP" not in out.split("Result:")[1]


def test_run_unknown_llm_is_bad_input() -> None:
    code, _, err = cli("run", "--spec", str(SPEC), "--instruction", "x", "--llm", "gpt-9")
    assert code == 2 and "unknown LLM spec" in err


def test_run_no_gate_sends_what_the_scanner_flags(terse_bookshop: Sandbox, tmp_path: Path) -> None:
    """``--no-gate --no-static``: the misspelt parameter reaches the server, whose terse
    code the docs explain (the paper's Dynamic setting from the command line)."""
    replay = tmp_path / "r.txt"
    replay.write_text(
        "<API>searchBooks(qurey='science')</API>\n---\n<API>searchBooks(query='science')</API>\n"
    )
    before = len(terse_bookshop.requests_seen)
    code, out, err = cli(
        "run",
        "--spec",
        str(SPEC),
        "--instruction",
        "Find science books",
        "--llm",
        f"replay:{replay}",
        "--base-url",
        terse_bookshop.url,
        "--no-gate",
        "--no-static",
        "--repair",
        "off",
    )
    assert code == 0, out + err
    assert len(terse_bookshop.requests_seen) == before + 2  # the flagged one was sent too
    refused, answered = list(terse_bookshop.requests_seen)[before:]
    assert (refused.status, refused.kind) == (400, "unknown_parameter")
    assert answered.status == 200


def test_run_constrain_needs_a_client_that_can(terse_bookshop: Sandbox) -> None:
    code, _, err = cli(
        "run",
        "--spec",
        str(SPEC),
        "--instruction",
        "x",
        "--llm",
        f"replay:{REPLAY}",
        "--base-url",
        terse_bookshop.url,
        "--constrain",
    )
    assert code == 2 and "constrain=True needs an LLM client" in err
