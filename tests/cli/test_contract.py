"""The CLI contract, run in-process (``run(argv, stdout, stderr)``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback.cli import run

DATA = Path(__file__).parents[1] / "data" / "scan"
TOOLS = str(DATA / "tools.json")
MOVIES = str(DATA / "movies.json")


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def test_scan_clean_exits_0() -> None:
    code, out, _ = cli(
        "scan", "--spec", TOOLS, "--no-semantic", "<API>get_weather(city='Paris')</API>"
    )
    assert code == 0 and "no findings" in out


def test_scan_reads_stdin_and_prints_feedback() -> None:
    code, out, _ = cli(
        "scan",
        "--spec",
        TOOLS,
        "--no-semantic",
        "-",
        stdin="Sure! <API>user_login(user_name='a', password='b')</API>",
    )
    assert code == 1
    assert "E2.2" in out and "Please regenerate the API request." in out


def test_scan_json_format() -> None:
    code, out, _ = cli(
        "scan", "--spec", MOVIES, "--no-semantic", "--format", "json", "GET /search/movie?page=x"
    )
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False
    assert [f["code"] for f in doc["findings"]] == ["E3.4", "E4.1"]
    assert set(doc["findings"][0]) >= {"code", "location", "got", "expected", "message", "severity"}
    assert doc["feedback"].startswith("There is an error")


def test_scan_reads_a_file(tmp_path: Path) -> None:
    f = tmp_path / "out.txt"
    f.write_text("```\nGET /movie/latest\n```")
    code, out, _ = cli("scan", "--spec", MOVIES, "--no-semantic", str(f))
    assert code == 0, out


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--spec", "missing.json", "x"],
        ["scan", "x"],
        ["bogus"],
        ["audit", "missing.jsonl", "--spec", TOOLS],
    ],
)
def test_bad_input_exits_2_without_traceback(argv: list[str]) -> None:
    code, _out, err = cli(*argv)
    assert code == 2
    assert "Traceback" not in err and err.strip()


def test_broken_spec_names_file(tmp_path: Path) -> None:
    spec = tmp_path / "broken.json"
    spec.write_text('{"openapi": "3.0.0", "paths": {')
    code, _, err = cli("scan", "--spec", str(spec), "x")
    assert code == 2 and "broken.json" in err and "Traceback" not in err


def _log(tmp_path: Path, lines: list[Any]) -> str:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return str(path)


def test_audit_jsonl_contract(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        [
            {"id": "a", "output": "<API>get_weather(city='Paris')</API>"},
            {"id": "b", "call": {"name": "get_weather", "arguments": {"town": "Paris"}}},
            "{not json",
            {"request": {"method": "GET", "url": "https://x.test/ping"}},
            {"id": "e", "output": "x", "call": {"name": "get_weather"}},
            [1, 2],
        ],
    )
    code, out, _ = cli("audit", log, "--spec", TOOLS, "--format", "jsonl", "--no-semantic")
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) == 6  # one line out per line in, in order
    assert rows[0] == {"id": "a", "ok": True, "findings": []}
    assert rows[1]["id"] == "b" and rows[1]["ok"] is False
    assert {f["code"] for f in rows[1]["findings"]} >= {"E3"}
    assert rows[2]["id"] == 3 and rows[2]["ok"] is False and "not valid JSON" in rows[2]["error"]
    assert rows[3]["id"] == 4 and rows[3]["findings"][0]["code"] == "E2"
    assert rows[4]["id"] == "e" and "exactly one" in rows[4]["error"]
    assert rows[5]["id"] == 6 and "error" in rows[5]
    for row in rows:
        for f in row.get("findings", []):
            assert set(f) >= {"code", "location", "got", "expected", "message", "severity"}
    assert code == 2  # bad input lines win over findings


def test_audit_exit_codes(tmp_path: Path) -> None:
    clean = _log(tmp_path, [{"output": "<API>get_weather(city='Paris')</API>"}])
    assert cli("audit", clean, "--spec", TOOLS, "--no-semantic")[0] == 0
    dirty = _log(tmp_path, [{"output": "<API>get_weather(cty='Paris')</API>"}])
    assert cli("audit", dirty, "--spec", TOOLS, "--no-semantic")[0] == 1


def test_audit_tools_per_record_without_spec(tmp_path: Path) -> None:
    tools = json.loads(Path(TOOLS).read_text())
    log = _log(
        tmp_path,
        [
            {"tools": tools, "call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
            {"tools": tools, "call": {"name": "send_email", "arguments": {"recipient": "a@b.io"}}},
            {"call": {"name": "get_weather", "arguments": {}}},
        ],
    )
    _code, out, _ = cli("audit", log, "--format", "jsonl", "--no-semantic")
    rows = [json.loads(x) for x in out.splitlines()]
    assert rows[0]["ok"] is True
    assert [f["code"] for f in rows[1]["findings"]] == ["E3.4", "E3.4"]
    assert "no 'tools'" in rows[2]["error"]


def test_audit_text_summary_and_output_file(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        [
            {"output": "<API>get_weather(CITY='Paris')</API>"},
            {"output": "<API>get_weather(city='Paris', days='x')</API>"},
            {"output": "no call here"},
        ],
    )
    report = tmp_path / "report.txt"
    code, out, _ = cli("audit", log, "--spec", TOOLS, "--no-semantic", "-o", str(report))
    text = report.read_text()
    assert code == 1 and out.startswith(f"wrote text report to {report}: 3 records")
    assert "3 records: 0 clean" in text
    for code_name in ("E1", "E3.2", "E4.1"):
        assert code_name in text.split("error type")[1]


def test_audit_refuses_to_write_its_report_over_its_input(tmp_path: Path) -> None:
    # issue 30: `audit LOG -o LOG` emptied the log, then reported "0 records", exit 0
    log = _log(tmp_path, [{"output": "<API>get_weather(CITY='Paris')</API>"}])
    before = Path(log).read_bytes()
    for target in (log, str(Path(log).parent / "." / Path(log).name), TOOLS):
        code, out, err = cli("audit", log, "--spec", TOOLS, "--no-semantic", "-o", target)
        assert code == 2 and out == "" and "would destroy it" in err, err
    assert Path(log).read_bytes() == before
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    assert cli("audit", log, "--spec", TOOLS, "--no-semantic", "-o", str(link))[0] == 2
    assert Path(log).read_bytes() == before


@pytest.mark.parametrize("content", ["", "\n\n", "  \n\t\n"])
def test_audit_of_an_empty_log_is_bad_input(tmp_path: Path, content: str) -> None:
    # "0 records, exit 0" read as a clean log: nothing was checked
    log = tmp_path / "empty.jsonl"
    log.write_text(content)
    code, out, err = cli("audit", str(log), "--spec", TOOLS, "--no-semantic")
    assert code == 2 and "0 records" in out
    assert f"{log} holds no records (it is empty or blank): nothing was checked" in err
    code, _, err = cli("audit", "-", "--spec", TOOLS, "--no-semantic", stdin=content)
    assert code == 2 and "stdin holds no records" in err


def test_audit_json_format(tmp_path: Path) -> None:
    log = _log(tmp_path, [{"output": "<API>get_weather(city='Paris')</API>"}])
    _code, out, _ = cli("audit", log, "--spec", TOOLS, "--no-semantic", "--format", "json")
    doc = json.loads(out)
    assert doc["summary"]["records"] == 1 and doc["records"][0]["ok"] is True


def test_audit_stdin(tmp_path: Path) -> None:
    code, out, _ = cli(
        "audit",
        "-",
        "--spec",
        TOOLS,
        "--no-semantic",
        "--format",
        "jsonl",
        stdin='{"output": "<API>get_weather(city=1)</API>"}\n',
    )
    assert code == 1 and json.loads(out)["findings"][0]["code"] == "E4.1"


def test_audit_semantic_with_real_model(tmp_path: Path) -> None:
    log = _log(
        tmp_path,
        [
            {
                "instruction": "What's the weather in Rome?",
                "output": "<API>fetch_weather(city='Rome')</API>",
            }
        ],
    )
    _code, out, _ = cli("audit", log, "--spec", TOOLS, "--format", "jsonl")
    assert json.loads(out)["findings"][0]["code"] == "E2.3"


def test_a_spec_fault_is_one_warning_line_naming_the_place(tmp_path: Path) -> None:
    spec = tmp_path / "pets.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.0",
                "paths": {
                    "/pets": {
                        "get": {
                            "operationID": "listPets",
                            "responses": {"200": {"description": "ok"}},
                        }
                    }
                },
            }
        )
    )
    code, _, err = cli("scan", "--spec", str(spec), "--no-semantic", "GET /pets")
    assert code == 0
    assert err == (
        f"autofeedback: warning: {spec}: paths./pets.get: unknown key 'operationID' "
        "(did you mean 'operationId'?); it is ignored\n"
    )
