"""What the command line says matches what happens (issue 40): ``run`` prints the
request it sent (repairs written in), as the trace holds it; the audit's error for a
record of no known shape names every shape it reads."""

from __future__ import annotations

import io
import json
from pathlib import Path

from autofeedback.cli import run
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "examples" / "bookshop.yaml"
REPLAY = ROOT / "specs" / "examples" / "demo-replay.txt"


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def test_run_prints_the_request_it_sent(terse_bookshop: Sandbox, tmp_path: Path) -> None:
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
    final = next(line for line in out.splitlines() if line.startswith("Final request:"))
    # before: "Final request: <API>search_books(query='science')</API>", the model's
    # text, while the trace and the server had searchBooks
    assert final == "Final request: <API>searchBooks(query='science')</API>"
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    assert rows[-1]["request"]["name"] == "searchBooks"


def test_a_record_of_no_known_shape_is_told_every_shape(tmp_path: Path) -> None:
    code, out, _ = cli(
        "audit",
        "-",
        "--spec",
        str(SPEC),
        "--no-semantic",
        "--format",
        "jsonl",
        stdin='{"id": "x", "instruction": "hi"}\n',
    )
    assert code == 2
    # before: "record needs exactly one of 'output', 'call', 'request' (got none)",
    # although a sequence ('steps', 'messages') is a record too
    assert json.loads(out)["error"] == (
        "record needs exactly one of 'output', 'call', 'request', or a sequence "
        "('steps', 'messages') (got none)"
    )
