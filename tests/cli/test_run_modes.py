"""`autofeedback run --mode react|program`, in-process, against the real sandbox on
127.0.0.1 (the model is a replay of recorded outputs)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from autofeedback.cli import run
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "examples" / "bookshop.yaml"
REPLAY = ROOT / "specs" / "examples" / "demo-task-replay.txt"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return run(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_run_react_prints_each_step_what_was_checked_and_fed_back(
    bookshop: Any, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    with Sandbox(bookshop, seed=0) as sandbox:
        code, out, err = cli(
            "run", "--mode", "react", "--spec", str(SPEC), "--llm", f"replay:{REPLAY}",
            "--instruction", "Who wrote Dune?", "--base-url", sandbox.url,
            "--trace", str(trace),
        )  # fmt: skip
    assert code == 0, out + err
    for turn in range(1, 5):
        assert f"turn {turn}" in out
    assert out.count("checked: getBook against the calls so far") == 2
    assert "E5.3" in out and "fed back:" in out and "not sent" in out
    assert "HTTP 200" in out and "/books/7" in out and "/books/123" not in out
    assert "Final answer: Dune was written by Frank Herbert." in out
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    assert rows[-1]["summary"] and rows[-1]["stop_reason"] == "answered"


def test_run_program_feeds_back_a_wrong_reference_path(tmp_path: Path) -> None:
    replay = tmp_path / "r.txt"
    replay.write_text(
        "```python\nr = searchBooks(query='Dune')\ngetBook(bookId=r.items[0].id)\n```\n---\n"
        "```python\nr = searchBooks(query='Dune')\ngetBook(bookId=r.books[0].id)\n```\n"
    )
    code, out, err = cli(
        "run", "--mode", "program", "--spec", str(SPEC), "--llm", f"replay:{replay}",
        "--instruction", "Get the details of Dune",
    )  # fmt: skip
    assert code == 0, out + err
    assert "E5.2" in out and "books[].id" in out and "Result: done (clean)" in out
    assert "getBook(bookId=r.books[0].id)" in out.split("Program:")[1]


def test_run_program_that_stays_wrong_exits_1(tmp_path: Path) -> None:
    replay = tmp_path / "r.txt"
    replay.write_text("getBook(bookId=r.id)\n")
    code, out, _ = cli(
        "run", "--mode", "program", "--spec", str(SPEC), "--llm", f"replay:{replay}",
        "--instruction", "Get a book", "--max-static", "0",
    )  # fmt: skip
    assert code == 1 and "E5.1" in out and "feedback-budget" in out
