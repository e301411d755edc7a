"""The command explains itself and fails honestly (issue 19): help with exit codes,
examples and environment, one error prefix, a suggestion for a misspelt flag or choice,
one line for a port in use or a missing file, and no noise when ``| head`` closes the
pipe. (Audit ergonomics: test_audit_command.py; ``[tool.autofeedback]``:
test_config.py; ``run``'s failures: test_run_failures.py.)"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autofeedback.cli import run

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = str(ROOT / "specs" / "examples" / "bookshop.yaml")
TOOLS = str(Path(__file__).parents[1] / "data" / "scan" / "tools.json")
TYPO = '{"call": {"name": "get_weather", "arguments": {"city": "Paris", "days": "x"}}}'


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def test_version() -> None:
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith("autofeedback ") and out.split()[1][0].isdigit()


def test_help_has_description_exit_codes_examples_and_environment() -> None:
    code, out, _ = cli("--help")
    assert code == 0
    assert "The ``autofeedback`` command" not in out
    assert "Check LLM-generated API requests" in out
    for part in (
        "exit codes:",
        "2  bad input",
        "examples:",
        "AUTOFEEDBACK_MODEL",
        "[tool.autofeedback]",
    ):
        assert part in out, part


def test_subcommand_help_shows_defaults_and_llm_forms() -> None:
    code, out, _ = cli("run", "--help")
    assert code == 0
    assert "rounds of static feedback (default: 3)" in " ".join(out.split())
    assert "(default: local)" in out and "local:OWNER/REPO" in out and "replay:FILE" in out
    assert "exit codes:" in out and "examples:" in out
    code, out, _ = cli("audit", "--help")
    assert "report format (default: text)" in " ".join(out.split()) and "-o FILE" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["scan"],
        ["scan", "--spec", "nope.yaml", "GET /x"],
        ["audit", "nope.jsonl", "--spec", TOOLS],
        ["audit", "-", "--engine", "dask"],
        ["run", "--instruction", "x"],
        ["index", "build", "--spec", BOOKSHOP],
        ["bogus"],
    ],
)
def test_every_error_has_one_prefix(argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert err.startswith("autofeedback: error: ") and err.count("\n") == 1, err
    assert "autofeedback: error: autofeedback" not in err


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["scan", "--specs", BOOKSHOP, "x"],
            "scan: unrecognized arguments: --specs x (did you mean --spec?)",
        ),
        (
            ["run", "--max-statics", "3", "--instructoin", "x"],
            "run: unrecognized arguments: "
            "--max-statics 3 --instructoin x (did you mean --max-static for --max-statics, "
            "--instruction for --instructoin?)",
        ),
        (
            ["index", "build", "--spce", BOOKSHOP],
            f"index build: unrecognized arguments: --spce {BOOKSHOP} (did you mean --spec?)",
        ),
        (
            ["scna"],
            "argument COMMAND: invalid choice: 'scna' (choose from 'scan', 'audit', "
            "'sandbox', 'index', 'flow', 'run', 'mcp-proxy', 'proxy'); did you mean 'scan'?",
        ),
        (
            ["audit", "x", "--format", "jsnol"],
            "audit: argument --format: invalid choice: "
            "'jsnol' (choose from 'text', 'json', 'jsonl', 'junit', 'sarif', 'html'); did you "
            "mean 'jsonl'?",
        ),
        (["scan", "--spec", BOOKSHOP, "a", "b"], "scan: unrecognized arguments: b"),
    ],
)
def test_a_misspelt_flag_or_choice_gets_a_suggestion(argv: list[str], said: str) -> None:
    code, out, err = cli(*argv)
    assert (code, out, err) == (2, "", f"autofeedback: error: {said}\n")


def test_help_lists_every_log_format_the_audit_reads() -> None:
    for argv in (["--help"], ["audit", "--help"]):
        text = " ".join(cli(*argv)[1].split())
        for kind in ("JSONL", "HAR", "Responses", "Anthropic", "Gemini", "Bedrock"):
            assert kind in text, (argv, kind)
    text = " ".join(cli("audit", "--help")[1].split())
    assert "har-session" in text and "chat (or openai)" in text


def test_sandbox_port_in_use_is_one_error_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = cli("sandbox", "--spec", BOOKSHOP, "--port", str(port))
    assert (code, out) == (2, "")
    assert err == (
        f"autofeedback: error: cannot listen on 127.0.0.1:{port}: the port is in use (is "
        "another server running there?); choose another with --port\n"
    )


def test_index_build_takes_index_like_run(tmp_path: Path) -> None:
    code, out, err = cli("index", "build", "--spec", BOOKSHOP, "--index", str(tmp_path / "ix"))
    assert code == 0, err
    assert (tmp_path / "ix" / "manifest.json").is_file() and "chunks" in out


def test_scan_of_a_missing_file_is_bad_input_not_text() -> None:
    code, out, err = cli("scan", "--spec", BOOKSHOP, "--no-semantic", "wrongname.txt")
    assert code == 2 and out == ""
    assert "no such file: wrongname.txt" in err
    # a request is still a request, even one without spaces
    assert cli("scan", "--spec", TOOLS, "--no-semantic", "get_weather(city='Paris')")[0] == 0


def test_head_closing_the_pipe_prints_no_noise() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = (
        f"{sys.executable} -c 'from autofeedback.cli import main; main()' "
        f"audit - --spec {TOOLS} --no-semantic --format jsonl | head -n 1"
    )
    lines = "\n".join([TYPO] * 20000) + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.stdout.count("\n") == 1
    assert done.stderr == "", done.stderr
