"""Hostile spec files (issue 18): each is a message naming the file and exit 2, never a
traceback, a crash, or every output blamed on the model as E1."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, SpecError
from autofeedback._specs import load_spec_file
from autofeedback._specs._text import MAX_DEPTH, parse_text
from autofeedback.cli import run

ROOT = Path(__file__).resolve().parents[2]
OP = (
    "paths:\n  /a:\n    get:\n      operationId: a\n"
    "      parameters: [{name: q, in: query, schema: {type: string}}]\n"
    "      responses: {'200': {description: ok}}\n"
)


def scan(spec: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["scan", "--no-semantic", "--spec", str(spec), "GET /a?q=1"], out, err)
    return code, out.getvalue(), err.getvalue()


def nested_yaml_flow(depth: int) -> str:
    return "openapi: 3.0.0\nx: " + "[" * depth + "]" * depth + "\n" + OP


def nested_yaml_block(depth: int) -> str:
    lines = "".join(" " * i + "-\n" for i in range(1, depth + 1))
    return "openapi: 3.0.0\nx:\n" + lines + OP


def nested_json(depth: int) -> str:
    return '{"openapi": "3.0.0", "x": ' + "[" * depth + "]" * depth + ', "paths": {}}'


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("flow.yaml", nested_yaml_flow(1_000)),
        ("flow20k.yaml", nested_yaml_flow(20_000)),
        ("block.yaml", nested_yaml_block(3_000)),
        ("deep.json", nested_json(5_000)),
        ("shallow-but-over.json", nested_json(MAX_DEPTH + 5)),
    ],
)
def test_deep_nesting_is_a_spec_error(tmp_path: Path, name: str, text: str) -> None:
    spec = tmp_path / name
    spec.write_text(text)
    code, out, err = scan(spec)
    assert code == 2 and out == ""
    assert (
        err == f"autofeedback: error: {spec}: the document nests deeper than {MAX_DEPTH} levels\n"
    )


def test_yaml_nested_50000_deep_does_not_kill_the_process(tmp_path: Path) -> None:
    # libyaml's composer recursed in C: SIGSEGV, so this one runs in its own process
    spec = tmp_path / "bomb.yaml"
    spec.write_text(nested_yaml_flow(50_000))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from autofeedback.cli import main; main()",
            "scan",
            "--no-semantic",
            "--spec",
            str(spec),
            "GET /a",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "nests deeper than" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_a_5000_digit_integer_is_a_spec_error(tmp_path: Path, suffix: str) -> None:
    spec = tmp_path / f"int.{suffix}"
    number = "9" * 5_000
    spec.write_text(
        f'{{"openapi": "3.0.0", "x": {number}, "paths": {{}}}}'
        if suffix == "json"
        else f"openapi: 3.0.0\nx: {number}\n{OP}"
    )
    code, _, err = scan(spec)
    assert code == 2 and err.startswith(f"autofeedback: error: {spec}: a value cannot be read")


def test_depth_up_to_the_limit_loads(tmp_path: Path) -> None:
    # paths.x = 1 level below the document; a list nested to the limit still loads
    spec = tmp_path / "ok.yaml"
    spec.write_text(nested_yaml_flow(MAX_DEPTH - 1))
    assert scan(spec)[0] == 0


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 400), style=st.sampled_from(["flow", "block", "json"]))
def test_any_depth_loads_or_is_refused_by_depth(depth: int, style: str) -> None:
    text = {"flow": nested_yaml_flow, "block": nested_yaml_block, "json": nested_json}[style](depth)
    try:
        parse_text(text, "<t>")
    except SpecError as exc:
        assert depth + 1 > MAX_DEPTH and "nests deeper" in exc.reason
    else:
        assert depth + 1 <= MAX_DEPTH


@pytest.mark.parametrize(
    "servers",
    [
        "servers: [{url: 'http://[::1'}]",
        "servers: [{url: 'http://example.org:99999/v1'}]",
    ],
)
def test_a_bad_server_url_is_a_spec_error_at_load(tmp_path: Path, servers: str) -> None:
    spec = tmp_path / "srv.yaml"
    spec.write_text(f"openapi: 3.0.0\n{servers}\n{OP}")
    code, out, err = scan(spec)
    assert code == 2 and "E1" not in out
    assert err.startswith(f"autofeedback: error: {spec}: servers[0].url: not a valid URL")


def test_a_bad_swagger_host_is_a_spec_error_at_load() -> None:
    doc = {"swagger": "2.0", "host": "[::1", "paths": {"/a": {"get": {"responses": {}}}}}
    with pytest.raises(SpecError, match="host: not a valid URL"):
        ApiCatalog.from_obj(doc)


def test_aliases_that_deepen_the_document_are_bounded_too() -> None:
    chain = "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, MAX_DEPTH + 5))
    with pytest.raises(SpecError, match="nests deeper than"):
        parse_text("a0: &a0 [1]\n" + chain, "<t>")


# -- $ref to something that is not a regular file; a tampered spec cache -----------------------


def _spec_with_ref(folder: Path, target: str) -> Path:
    spec = folder / "api.yaml"
    spec.write_text(
        "openapi: 3.0.0\nservers: [{url: 'https://api.example.org'}]\npaths:\n  /a:\n"
        "    get:\n      operationId: a\n      parameters:\n"
        f"        - {{name: q, in: query, schema: {{$ref: '{target}#/S'}}}}\n"
        "      responses: {'200': {description: ok}}\n"
    )
    return spec


def test_a_ref_to_a_fifo_is_a_spec_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    spec = _spec_with_ref(tmp_path, "pipe.yaml")
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_spec_file(spec, cache_dir=False)
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so the thread ends, then fail
        with open(tmp_path / "pipe.yaml", "w") as fifo:
            fifo.write("S: {type: string}\n")
        pytest.fail("loading a spec whose $ref names a FIFO hung")
    (exc,) = outcome
    assert isinstance(exc, SpecError) and "not a regular file" in str(exc)


def _cached(tmp_path: Path) -> tuple[Path, Path, Path]:
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "common.yaml").write_text("S: {type: string}\n")
    spec = _spec_with_ref(folder, "common.yaml")
    cache = tmp_path / "cache"
    load_spec_file(spec, cache_dir=cache)
    (entry,) = (cache / "specs").iterdir()
    return spec, cache, entry


def _entry(entry: Path) -> tuple[Any, ...]:
    value = pickle.loads(entry.read_bytes())
    assert isinstance(value, tuple)
    return value


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda e: ("x", [], [], [], []), id="not-its-key"),
        pytest.param(lambda e: (e[0], e[1], [e[1][0]], e[3], e[4]), id="servers-not-strings"),
        pytest.param(lambda e: (e[0], e[1], ["http://[::1"], e[3], e[4]), id="bad-server"),
        pytest.param(lambda e: (e[0], [e[1][0], 5], e[2], e[3], e[4]), id="not-operations"),
        pytest.param(
            lambda e: (e[0], [replace(e[1][0], parameters=("q",))], e[2], e[3], e[4]),
            id="bad-parameters",
        ),
        pytest.param(lambda e: (e[0], e[1], e[2], [("/dev/zero", "0" * 64)], e[4]), id="dev-zero"),
        pytest.param(lambda e: (e[0], e[1], e[2], [("/etc/passwd", "0")], e[4]), id="outside"),
        pytest.param(lambda e: (e[0], e[1], e[2], [("/dev/zero",)], e[4]), id="ref-shape"),
        pytest.param(lambda e: (*e[:4], [("where", 1)]), id="faults-not-strings"),
        pytest.param(lambda e: (*e[:4], "faults"), id="faults-not-a-list"),
        pytest.param(lambda e: (*e, 1), id="six-fields"),
        pytest.param(lambda e: e[:4], id="old-format"),
    ],
)
def test_a_tampered_cache_entry_is_a_miss(tmp_path: Path, tamper: Any) -> None:
    spec, cache, entry = _cached(tmp_path)
    entry.write_bytes(pickle.dumps(tamper(_entry(entry))))
    ops, servers = load_spec_file(spec, cache_dir=cache)
    assert servers == ["https://api.example.org"]
    assert ops[0].parameters[0].schema == {"type": "string"}


def test_an_entry_copied_over_another_specs_key_cannot_replace_its_servers(
    tmp_path: Path,
) -> None:
    spec, cache, entry = _cached(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "common.yaml").write_text("S: {type: string}\n")
    evil = _spec_with_ref(other, "common.yaml")
    evil.write_text(evil.read_text().replace("api.example.org", "evil.example"))
    load_spec_file(evil, cache_dir=cache)
    (evil_entry,) = set((cache / "specs").iterdir()) - {entry}
    entry.write_bytes(evil_entry.read_bytes())
    assert load_spec_file(spec, cache_dir=cache)[1] == ["https://api.example.org"]


def test_a_cache_entry_that_is_not_a_regular_file_is_a_miss(tmp_path: Path) -> None:
    spec, cache, entry = _cached(tmp_path)
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert load_spec_file(spec, cache_dir=cache)[1] == ["https://api.example.org"]


def test_tools_parsed_elsewhere_are_bounded_too() -> None:
    # a log record's tools arrive as objects, not text: the same depth bound applies
    inner: Any = {"type": "string"}
    for _ in range(MAX_DEPTH):
        inner = {"type": "object", "properties": {"a": inner}}
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {"p": inner}}}]
    with pytest.raises(SpecError, match="nests deeper than"):
        ApiCatalog.from_tools(tools)
