"""Sequences through `autofeedback audit`, in-process: JSONL program and trace records and
a HAR capture read as one session, on the bundled bookshop spec."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from autofeedback.cli import run

BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"


def audit(path: Path, *extra: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = run(
        ["audit", str(path), "--spec", str(BOOKSHOP), "--no-semantic", "--format", "json", *extra],
        stdout=out,
        stderr=err,
    )
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


def test_program_records(tmp_path: Path) -> None:
    log = tmp_path / "programs.jsonl"
    good = 'b = searchBooks(query="Dune")\ngetBook(bookId=b.books[0].id)'
    bad = 'b = searchBooks(query="Dune")\ngetBook(bookId=b.book[0].id)'
    log.write_text(
        "\n".join(
            json.dumps({"id": rid, "instruction": "Show me Dune", "output": program})
            for rid, program in (("good", good), ("bad", bad))
        )
        + "\n",
        encoding="utf-8",
    )
    code, report = audit(log)
    assert code == 1
    results = {r["id"]: r for r in report["records"]}
    assert results["good"]["ok"]
    (finding,) = results["bad"]["findings"]
    assert finding["code"] == "E5.2" and finding["suggestion"] == "books[].id"


def _har(book_id: int) -> dict[str, Any]:
    return {
        "log": {
            "entries": [
                {
                    "request": {
                        "method": "GET",
                        "url": "http://127.0.0.1:8080/books?query=Dune",
                        "headers": [{"name": "Authorization", "value": "Bearer sk-live-123"}],
                    },
                    "response": {
                        "status": 200,
                        "content": {"text": json.dumps({"total": 1, "books": [{"id": 7}]})},
                    },
                },
                {
                    "request": {"method": "GET", "url": f"http://127.0.0.1:8080/books/{book_id}"},
                    "response": {"status": 200, "content": {"text": "{}"}},
                },
            ]
        }
    }


def test_har_session_grounds_ids_in_earlier_responses(tmp_path: Path) -> None:
    capture = tmp_path / "session.har"
    capture.write_text(json.dumps(_har(7)), encoding="utf-8")
    code, report = audit(capture, "--input-format", "har-session")
    assert code == 0, report
    capture.write_text(json.dumps(_har(8)), encoding="utf-8")
    code, report = audit(capture, "--input-format", "har-session")
    assert code == 1
    (finding,) = report["records"][0]["findings"]
    assert finding["code"] == "E5.3" and finding["location"][0] == "step[1]"
    assert "sk-live-123" not in json.dumps(report)


def test_har_session_that_is_not_a_har_is_one_error(tmp_path: Path) -> None:
    capture = tmp_path / "session.har"
    capture.write_text('{"log": {}}', encoding="utf-8")
    code, report = audit(capture, "--input-format", "har-session")
    assert code == 2 or (code == 1 and report["records"][0]["error"])
    code, message = audit(capture, "--input-format", "har-session", "--engine", "dask")
    assert code == 2 and "one sequence" in message
