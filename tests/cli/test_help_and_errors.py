"""What a newcomer trips over in the CLI (issue 19): a command that explains itself, one
error prefix, honest failures, audit ergonomics, ``[tool.autofeedback]``."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autofeedback.cli import find_config, run

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = str(ROOT / "specs" / "examples" / "bookshop.yaml")
TOOLS = str(Path(__file__).parents[1] / "data" / "scan" / "tools.json")
CLEAN = '{"call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
TYPO = '{"call": {"name": "get_weather", "arguments": {"city": "Paris", "days": "x"}}}'


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


# -- the command explains itself ----------------------------------------------------------


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


def test_the_chat_input_format_reads_an_anthropic_log(tmp_path: Path) -> None:
    line = {
        "request": {
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [
                {
                    "name": "get_weather",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                }
            ],
        },
        "response": {
            "content": [
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"City": "x"}}
            ]
        },
    }
    log = tmp_path / "claude.log"
    log.write_text(json.dumps(line) + "\n")
    code, out, _ = cli(
        "audit", str(log), "--input-format", "chat", "--no-semantic", "--format", "jsonl"
    )
    assert code == 1 and json.loads(out)["findings"][0]["code"] == "E3.2"


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


# -- [tool.autofeedback] in pyproject.toml ----------------------------------------------


def test_pyproject_configuration_is_found_upwards_and_flags_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "api.json").write_text(Path(TOOLS).read_text())
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.autofeedback]
            spec = "api.json"       # relative to this file
            semantic = false
            max-static = 1
            """
        )
    )
    monkeypatch.chdir(project / "sub")
    found = find_config()
    assert found is not None and found[0] == project / "pyproject.toml"
    code, out, err = cli("scan", "<API>get_weather(city='Paris')</API>")
    assert code == 0 and "no findings" in out, err
    # a flag on the command line wins over the file
    code, out, _ = cli("scan", "--spec", BOOKSHOP, "GET /books?query=dune&limit=ten")
    assert code == 1 and "E4.1" in out
    code, out, _ = cli("run", "--help")
    assert "(default: 1)" in out  # max-static from the file is the shown default


def test_pyproject_unknown_key_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.autofeedback]\nspecs = ['a.yaml']\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("scan", "GET /x")
    assert code == 2 and "no key 'specs'" in err and "known: " in err


# -- audit ergonomics ---------------------------------------------------------------------


def test_audit_skips_blank_lines(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(f"{CLEAN}\n\n   \n{CLEAN}\n\n")
    code, out, _ = cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    assert code == 0
    assert [json.loads(x)["id"] for x in out.splitlines()] == [1, 4]


def test_audit_json_error_names_the_real_column(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"output": "x"\n')
    code, out, _ = cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "jsonl")
    assert code == 2
    assert "column 15" in json.loads(out)["error"]


def test_audit_to_a_file_says_what_it_wrote(tmp_path: Path) -> None:
    log, report = tmp_path / "log.jsonl", tmp_path / "report.html"
    log.write_text(f"{CLEAN}\n{TYPO}\nnot json\n")
    code, out, err = cli(
        "audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "html", "-o", str(report)
    )
    assert code == 2 and err == ""
    assert out == (
        f"wrote html report to {report}: 3 records: 1 clean, 1 with findings, 1 bad input line\n"
    )
    assert report.is_file()


def test_audit_without_spec_says_so_once(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(f"{CLEAN}\n" * 5)
    code, out, err = cli("audit", str(log), "--no-semantic")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--spec" in err and err.startswith("autofeedback: error: ")


def test_audit_summary_counts_errors_and_warnings_apart() -> None:
    from autofeedback import Finding
    from autofeedback.audit._audit import AuditResult, AuditSummary

    summary = AuditSummary()
    warn = Finding("E2.1", ("api",), "a", "b", "doubt", severity="warning")
    error = Finding("E2.1", ("api",), "a", "b", "sure", severity="error")
    summary.add(AuditResult(1, True, (warn,)))
    summary.add(AuditResult(2, False, (error,)))
    summary.add(AuditResult(3, True, (warn,)))
    assert summary.severity_rows() == [("E2.1", summary.code_rows()[0][1], 1, 2)]
    assert summary.headline() == "3 records: 2 clean, 1 with findings, 0 bad input lines"


# -- run: the infrastructure's failure is not the model's ----------------------------------


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


# -- local models: which are installed (nothing is downloaded) ----------------------------


def test_local_picks_the_installed_model_and_says_which_are_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback.loop._llm import LOCAL_MODELS, _pick_local, installed_local_models

    # a machine without the chunk packages, whatever this one has installed
    chunks = {d.replace("-", "_") for m in LOCAL_MODELS.values() for d in m.distributions}
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name in chunks else find_spec(name, *rest),
    )
    cache, hub = tmp_path / "models", tmp_path / "hub"
    cache.mkdir()
    hub.mkdir()
    assert installed_local_models(cache_dir=cache, hf_cache_dir=hub) == {}
    with pytest.raises(Exception, match="no local model is installed") as info:
        _pick_local(cache, hub)
    assert "local:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF" in str(info.value)
    assert "Offline: pip install 'autofeedback-api[local-1-5b]'" in str(info.value)
    # the 1.5B in the cache, vouched for by its stamp (a sparse file: no disk, no hashing)
    big = LOCAL_MODELS["1.5b"]
    path = cache / big.filename
    with path.open("wb") as f:
        f.truncate(big.size)
    st = path.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": big.sha256}
    (cache / (big.filename + ".sha256-ok")).write_text(json.dumps(stamp))
    assert installed_local_models(cache_dir=cache, hf_cache_dir=hub) == {
        "1.5b": "autofeedback cache"
    }
    assert _pick_local(cache, hub) == "1.5b"


def test_a_missing_local_model_names_the_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback import ConfigurationError
    from autofeedback.loop._llm import LOCAL_MODELS, ensure_local_model

    big = LOCAL_MODELS["1.5b"]
    # no model's weight packages importable, whatever this environment installed (CI
    # installs the 0.5B one): the 1.5B model is only in the cache
    for model in LOCAL_MODELS.values():
        for dist in model.distributions:
            monkeypatch.setitem(sys.modules, dist.replace("-", "_"), None)
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path))
    cache = tmp_path / "models"
    cache.mkdir()
    path = cache / big.filename
    with path.open("wb") as f:
        f.truncate(big.size)  # sparse: no disk, and its stamp spares the hashing
    st = path.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": big.sha256}
    (cache / (big.filename + ".sha256-ok")).write_text(json.dumps(stamp))
    with pytest.raises(ConfigurationError, match=r"installed: 1\.5b \(autofeedback cache\)"):
        ensure_local_model("0.5b")


def test_json_and_html_summaries_count_warnings_apart(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(f"{CLEAN}\n{TYPO}\n")
    _, out, _ = cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "json")
    summary = json.loads(out)["summary"]
    assert summary["by_code"] == {"E4.1": 1} and summary["warnings_by_code"] == {}
    html = tmp_path / "r.html"
    cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "html", "-o", str(html))
    assert "<th>errors</th><th>warnings</th>" in html.read_text()
