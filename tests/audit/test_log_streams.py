"""``audit`` reads the logs users pass as they pass them (issue 40): a pipe or a process
substitution (``audit /dev/stdin``, ``audit <(zcat log.gz)``) is read as a stream, and a
file that is no text log (gzip, binary) is said once what it is, not reported as one
"not valid JSON" line per garbage line."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from autofeedback.cli import run

DATA = Path(__file__).resolve().parents[1] / "data"
SPEC = DATA / "specs" / "calendar.yaml"
RECORDS = [
    {"id": "ok", "call": {"name": "listCalendars", "arguments": {"maxResults": 10}}},
    {"id": "typo", "call": {"name": "list_events", "arguments": {"calendar_id": "c1"}}},
]
LOG = "".join(json.dumps(r) + "\n" for r in RECORDS)


def audit(*argv: str, stdin: io.TextIOBase | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = ["audit", *argv, "--spec", str(SPEC), "--no-semantic", "--format", "jsonl"]
    code = run(args, stdout=out, stderr=err, stdin=stdin or io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe a writer thread fills with the log: what ``<(zcat log.gz)`` and
    ``/dev/stdin`` of a pipe are, a file that cannot be rewound."""
    path = tmp_path / "log.pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "w", encoding="utf-8") as pipe:
            pipe.write(LOG)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    yield path
    if writer.is_alive():  # nothing read the pipe: read it, so the writer can finish
        with open(path, encoding="utf-8") as drain:
            drain.read()
    writer.join(10)


def test_a_pipe_is_read_as_a_stream(fifo: Path, tmp_path: Path) -> None:
    # before: "autofeedback: error: underlying stream is not seekable", exit 2
    code, out, err = audit(str(fifo))
    file = tmp_path / "log.jsonl"
    file.write_text(LOG, encoding="utf-8")
    assert (code, err) == (1, "")
    assert out == audit(str(file))[1]
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["ok", "typo"]


def test_dask_is_told_it_cannot_split_a_pipe(fifo: Path) -> None:
    code, _, err = audit(str(fifo), "--engine", "dask")
    assert code == 2
    assert "--engine dask splits a regular file" in err


def test_a_gzip_log_is_named_once(tmp_path: Path) -> None:
    # before: one "not valid JSON" result per line of compressed bytes, exit 2
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip.compress(LOG.encode() * 400))
    code, out, err = audit(str(path))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"autofeedback: error: audit: {path} is gzip-compressed data, not a text log: "
        f"decompress it first (`zcat {path} | autofeedback audit - ...`)"
    ]


def test_gzip_on_stdin_is_named_once() -> None:
    data = gzip.compress(LOG.encode())
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    code, out, err = audit("-", stdin=stdin)
    assert (code, out) == (2, "")
    assert "stdin is gzip-compressed data, not a text log" in err
    assert len(err.splitlines()) == 1


def test_a_binary_log_is_named_once(tmp_path: Path) -> None:
    path = tmp_path / "capture.bin"
    path.write_bytes(bytes(range(256)) * 64)
    code, out, err = audit(str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"autofeedback: error: audit: {path} is not UTF-8 text (binary data): "
        "not a log autofeedback reads\n"
    )


def test_a_few_bad_bytes_are_those_records_errors(tmp_path: Path) -> None:
    # a text log with one line of bad bytes is still read, record by record
    path = tmp_path / "log.jsonl"
    path.write_bytes(LOG.encode() + b'{"output": "\xff\xfe"}\n' + b"\x00\x00\n")
    code, out, _ = audit(str(path))
    assert code == 2
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["ok", "typo", 3, 4]
