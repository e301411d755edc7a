"""``autofeedback audit`` as a user meets it (issue 19): blank lines skipped, a JSON
error naming its real column, one line saying what ``-o`` wrote, a missing ``--spec`` said
once, an Anthropic log read by ``--input-format chat``, and JSON and HTML summaries
counting errors and warnings apart."""

from __future__ import annotations

import io
import json
from pathlib import Path

from autofeedback.cli import run

TOOLS = str(Path(__file__).parents[1] / "data" / "scan" / "tools.json")
CLEAN = '{"call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
TYPO = '{"call": {"name": "get_weather", "arguments": {"city": "Paris", "days": "x"}}}'


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


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


def test_json_and_html_summaries_count_warnings_apart(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(f"{CLEAN}\n{TYPO}\n")
    _, out, _ = cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "json")
    summary = json.loads(out)["summary"]
    assert summary["by_code"] == {"E4.1": 1} and summary["warnings_by_code"] == {}
    html = tmp_path / "r.html"
    cli("audit", str(log), "--spec", TOOLS, "--no-semantic", "--format", "html", "-o", str(html))
    assert "<th>errors</th><th>warnings</th>" in html.read_text()
