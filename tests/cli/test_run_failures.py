"""``autofeedback run`` when the infrastructure fails, not the model: a server that is
not running is bad input (exit 2) in one line; and ``--progress`` says on stderr while the
model writes, nothing on stdout."""

from __future__ import annotations

import io
import socket
from pathlib import Path
from typing import Any

from autofeedback.cli import run

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = str(ROOT / "specs" / "examples" / "bookshop.yaml")


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_run_against_a_server_that_is_not_running_exits_2(tmp_path: Path) -> None:
    replay = tmp_path / "replay.txt"
    replay.write_text(
        "<API>searchBooks(query='science', genre='science')</API>\n---\n"
        "<API>searchBooks(query='science', genre='science')</API>\n"
    )
    base = f"http://127.0.0.1:{_closed_port()}"
    code, out, err = cli(
        "run",
        "--spec",
        BOOKSHOP,
        "--instruction",
        "Find science books",
        "--llm",
        f"replay:{replay}",
        "--base-url",
        base,
    )
    assert code == 2, out + err
    assert err == f"autofeedback: error: cannot reach {base}: is the server running?\n"
    assert "dynamic feedback" not in out and "repeated" not in out


def test_run_says_while_the_model_writes_with_progress(terse_bookshop: Any, tmp_path: Path) -> None:
    replay = tmp_path / "replay.txt"
    replay.write_text("<API>searchBooks(query='science')</API>\n")
    code, out, err = cli(
        "run",
        "--spec",
        BOOKSHOP,
        "--instruction",
        "Find books about science",
        "--llm",
        f"replay:{replay}",
        "--base-url",
        terse_bookshop.url,
        "--progress",
        "always",
    )
    assert code == 0, out + err
    assert "the model is writing attempt 1..." in err and "attempt 1: done in" in err
    assert "the model is writing" not in out
    # without a terminal and without --progress, stderr stays quiet
    assert (
        cli(
            "run",
            "--spec",
            BOOKSHOP,
            "--instruction",
            "Find books about science",
            "--llm",
            f"replay:{replay}",
            "--base-url",
            terse_bookshop.url,
        )[2]
        == ""
    )
