"""``--engine dask``: partitions of the log audited in parallel give the same report."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest

from autofeedback._engines import count_lines, partitions
from autofeedback.cli import run

DATA = Path(__file__).parent / "data"
TOOLS = str(DATA / "scan" / "tools.json")
CHAT = DATA / "audit" / "chat.jsonl"
HAR = str(DATA / "audit" / "movies.har")

pytest.importorskip("dask", reason="the [dask] extra is not installed")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


def _records() -> list[bytes]:
    calls = [
        {"call": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "t", "call": {"name": "get_weather", "arguments": {"CITY": "Paris", "days": "x"}}},
        {"output": "<API>send_email(recipient='a@b.io')</API>"},
        {"output": "<API>user_login(user_name='ü', password='p')</API>"},
        {"request": {"method": "GET", "url": "https://x.test/ping"}},
    ]
    lines = [json.dumps(c, ensure_ascii=False).encode() + b"\n" for c in calls]
    # what real logs hold too: blank lines, CRLF, a lone CR, broken JSON, bad UTF-8
    lines += [b"\n", b'{"call": {"name": "get_weather", "arguments": {}}}\r\n', b"{broken\n"]
    lines += [b'{"output": "\xff\xfe not utf-8"}\n', b'{"output": "a"}\r{"output": "b"}\n']
    return lines


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("dask") / "log.jsonl"
    records = _records()
    with path.open("wb") as f:
        for i in range(600):
            f.write(records[i % len(records)])
        f.write(b'{"output": "no newline at the end"}')
    return str(path)


def test_partitions_start_lines_and_cover_the_file(big_log: str) -> None:
    data = Path(big_log).read_bytes()
    ranges = partitions(big_log, 1000)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) > 10
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start and data[start - 1 : start] == b"\n"
    with open(big_log, encoding="utf-8", errors="replace") as f:
        total = sum(1 for _ in f)
    assert sum(count_lines(big_log, a, b) for a, b in ranges) == total


@pytest.mark.parametrize("fmt", ["jsonl", "text", "sarif", "junit"])
def test_dask_report_is_byte_identical(big_log: str, fmt: str) -> None:
    base = ["audit", big_log, "--spec", TOOLS, "--no-semantic", "--format", fmt]
    local = cli(*base)
    dask = cli(
        *base,
        "--engine",
        "dask",
        "--dask-scheduler",
        "threads",
        "--workers",
        "3",
        "--partition-mb",
        "0.002",
    )
    assert local[0] == dask[0] == 2
    assert dask[1] == local[1]
    assert "Traceback" not in dask[2]


def test_dask_processes_and_openai_logs(tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_bytes(CHAT.read_bytes() * 40)
    base = ["audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "jsonl"]
    local = cli(*base)
    dask = cli(*base, "--engine", "dask", "--workers", "2", "--partition-mb", "0.01")
    assert dask[2] == "" and dask[:2] == local[:2]
    assert len(local[1].splitlines()) == 8 * 40


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-"], "needs a log file"),
        ([HAR], "line-based"),
        ([str(CHAT), "--workers", "0"], "at least 1"),
    ],
)
def test_dask_bad_usage_is_a_clear_error(argv: list[str], message: str) -> None:
    code, out, err = cli("audit", *argv, "--spec", TOOLS, "--no-semantic", "--engine", "dask")
    assert code == 2 and message in err and "Traceback" not in err and out == ""
