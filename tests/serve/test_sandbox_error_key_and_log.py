"""The sandbox as a newcomer meets it (issue 19): one error key, a useful access log,
--host."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from pathlib import Path

import requests

from autofeedback import ApiCatalog
from autofeedback.serve._sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/a": {
            "get": {
                "operationId": "getA",
                "parameters": [
                    {"name": "page", "in": "query", "schema": {"type": "integer"}},
                    {"name": "api_key", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {"description": "ok"},
                    "400": {"description": "code 4001: page must be an integer"},
                },
            }
        },
        "/b": {"get": {"operationId": "getB", "responses": {"200": {"description": "ok"}}}},
    },
}


def test_every_error_answer_uses_the_same_key() -> None:
    with Sandbox(ApiCatalog.from_obj(SPEC), terse=True) as sandbox:
        documented = requests.get(sandbox.url + "/a", params={"page": "x"}, timeout=10)
        undocumented = requests.get(sandbox.url + "/b", params={"nope": 1}, timeout=10)
        unknown_path = requests.get(sandbox.url + "/zzz", timeout=10)
    assert documented.json() == {"code": 4001}
    assert list(undocumented.json()) == ["code"] and list(unknown_path.json()) == ["code"]


def test_the_access_log_keeps_the_query_string_without_credentials() -> None:
    log = io.StringIO()
    with Sandbox(ApiCatalog.from_obj(SPEC), log=log) as sandbox:
        requests.get(sandbox.url + "/a", params={"page": 2, "api_key": "s3cr3t"}, timeout=10)
    assert log.getvalue() == "GET /a?page=2&api_key=[REDACTED] 200\n"


def test_the_cli_sandbox_takes_a_host(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))
        port = s.getsockname()[1]
    spec = ROOT / "specs" / "examples" / "bookshop.yaml"
    argv = [sys.executable, "-c", "from autofeedback.cli import main; main()", "sandbox"]
    argv += ["--spec", str(spec), "--host", "127.0.0.2", "--port", str(port)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert f"at http://127.0.0.2:{port} " in first, first
            r = requests.get(f"http://127.0.0.2:{port}/books", params={"query": "x"}, timeout=10)
            assert r.status_code == 200
        finally:
            proc.terminate()
            proc.wait(timeout=30)
