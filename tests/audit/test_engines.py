"""``--engine dask``: partitions of the log audited in parallel give the same report."""

from __future__ import annotations

import io
import itertools
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support.ports import free_port

from autofeedback.audit._audit import audit_lines
from autofeedback.audit._engines import (
    LOCAL_CLUSTER_OPTIONS,
    audit_file_dask,
    count_lines,
    partitions,
)
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.cli import run

DATA = Path(__file__).parents[1] / "data"
TOOLS = str(DATA / "scan" / "tools.json")
CHAT = DATA / "audit" / "chat.jsonl"
HAR = str(DATA / "audit" / "movies.har")

pytest.importorskip("dask", reason="the [dask] extra is not installed")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


def open_lines(path: str) -> list[str]:
    """The lines the local engine reads (ended by "\n" only, bad UTF-8 replaced)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="\n") as f:
        return list(f)


def _records() -> list[bytes]:
    calls = [
        {"call": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "t", "call": {"name": "get_weather", "arguments": {"CITY": "Paris", "days": "x"}}},
        {"output": "<API>send_email(recipient='a@b.io')</API>"},
        {"output": "<API>user_login(user_name='ü', password='p')</API>"},
        {"request": {"method": "GET", "url": "https://x.test/ping"}},
    ]
    lines = [json.dumps(c, ensure_ascii=False).encode() + b"\n" for c in calls]
    # what real logs hold too: blank lines, CRLF, a lone CR (JSON Lines ends a record
    # at "\n" only: one bad line, not two), broken JSON, bad UTF-8
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
    total = len(open_lines(big_log))
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
        ([str(CHAT), "--dask-timeout", "0"], "timeout must be positive"),
    ],
)
def test_dask_bad_usage_is_a_clear_error(argv: list[str], message: str) -> None:
    code, out, err = cli("audit", *argv, "--spec", TOOLS, "--no-semantic", "--engine", "dask")
    assert code == 2 and message in err and "Traceback" not in err and out == ""


# -- dask.distributed: a real LocalCluster of worker processes on 127.0.0.1 -------------

EXAMPLE_LOG = str(Path(__file__).parents[2] / "specs" / "examples" / "requests.jsonl")
BOOKSHOP = str(Path(__file__).parents[2] / "specs" / "examples" / "bookshop.yaml")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        silence_logs=logging.ERROR,
        **LOCAL_CLUSTER_OPTIONS,
    ) as running:
        yield running


def test_tcp_address_gives_the_local_report_with_semantic_checks(cluster: Any) -> None:
    # the workers load the embedding model themselves, on their first semantic check
    base = ["audit", EXAMPLE_LOG, "--spec", BOOKSHOP, "--format", "jsonl"]
    local = cli(*base)
    remote = cli(
        *base,
        "--engine",
        "dask",
        "--dask-scheduler",
        cluster.scheduler_address,
        "--partition-mb",
        "0.0005",  # several partitions over both workers
    )
    assert remote == local and local[0] == 2
    # E3.3 needs the embedding model (a semantic variant): the workers loaded it
    assert any('"E3.3"' in line for line in local[1].splitlines())


@pytest.mark.parametrize("fmt", ["jsonl", "sarif"])
def test_tcp_address_on_a_larger_log_is_byte_identical(
    cluster: Any, big_log: str, fmt: str
) -> None:
    base = ["audit", big_log, "--spec", TOOLS, "--no-semantic", "--format", fmt]
    local = cli(*base)
    remote = cli(
        *base,
        "--engine",
        "dask",
        "--dask-scheduler",
        cluster.scheduler_address,
        "--partition-mb",
        "0.002",
    )
    assert remote == local and local[0] == 2


def test_cluster_object_and_partitions_keep_line_numbers(cluster: Any, big_log: str) -> None:
    catalog = ApiCatalog.from_file(TOOLS)
    local = [r.as_dict() for r in audit_lines(open_lines(big_log), catalog, retriever=None)]
    remote = audit_file_dask(
        big_log, catalog, retriever=None, scheduler=cluster, partition_bytes=1500
    )
    assert [r.as_dict() for r in remote] == local


def test_local_cluster_started_for_the_run(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    log = tmp_path / "chat.jsonl"
    log.write_bytes(CHAT.read_bytes() * 10)
    base = ["audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "text"]
    local = cli(*base)
    dask = cli(
        *base,
        "--engine",
        "dask",
        "--dask-scheduler",
        "local-cluster",
        "--dask-workers",
        "2",
        "--partition-mb",
        "0.005",
    )
    assert dask == local


def test_unreachable_scheduler_is_one_line_exit_2() -> None:
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    address = f"tcp://127.0.0.1:{free_port()}"
    code, out, err = cli(
        "audit",
        EXAMPLE_LOG,
        "--spec",
        BOOKSHOP,
        "--engine",
        "dask",
        "--dask-scheduler",
        address,
        "--dask-timeout",
        "0.5",
    )
    assert (code, out) == (2, "")
    assert err == (
        f"autofeedback: error: cannot reach the Dask scheduler at {address} within 0.5 s "
        "(is it running? see --dask-timeout)\n"
    )


def test_scheduler_without_workers_is_a_clear_error() -> None:
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(
        n_workers=0, host="127.0.0.1", silence_logs=logging.ERROR, **LOCAL_CLUSTER_OPTIONS
    ) as empty:
        code, out, err = cli(
            "audit",
            EXAMPLE_LOG,
            "--spec",
            BOOKSHOP,
            "--engine",
            "dask",
            "--dask-scheduler",
            empty.scheduler_address,
            "--dask-timeout",
            "0.5",
        )
    assert (code, out) == (2, "")
    assert "has no workers" in err and err.count("\n") == 1


def test_missing_distributed_is_a_clear_error() -> None:
    # in a child process: hiding the package here would break the running cluster's
    # own lazy imports
    hide = (
        "import sys; sys.modules['distributed'] = None; from autofeedback.cli import main; main()"
    )
    argv = ["audit", EXAMPLE_LOG, "--spec", BOOKSHOP, "--engine", "dask"]
    proc = subprocess.run(
        [sys.executable, "-c", hide, *argv, "--dask-scheduler", "local-cluster"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "autofeedback: error: --dask-scheduler local-cluster needs dask.distributed: "
        "pip install 'autofeedback-api[dask]'\n"
    )


@pytest.mark.parametrize("name", ["tcp://127.0.0.1", "http://127.0.0.1:8786", "cluster"])
def test_bad_scheduler_names_are_usage_errors(name: str) -> None:
    code, out, err = cli("audit", EXAMPLE_LOG, "--spec", BOOKSHOP, "--dask-scheduler", name)
    assert (code, out) == (2, "")
    assert "unknown Dask scheduler" in err and err.count("\n") == 1
