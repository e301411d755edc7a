"""A credential is registered once and masked everywhere it appears again (issue 18
item 4): each record below carries a credential in one of the forms that leaked (cookie
values, a decoded Basic password, curl ``-u``/``--user``/``--oauth2-bearer``/``-b``,
``Authorization: token X``, a record id) and sends the same value again as an ordinary
parameter (``limit``, an integer, so a finding quotes it). No output may show it."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from autofeedback import ApiCatalog, Scanner
from autofeedback.cli import run
from autofeedback.core._redact import REDACTED, credential_values
from autofeedback.integrations._adapter import RequestRejected, guard_session
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.serve._sandbox import Sandbox

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:8080"}],
    "paths": {
        "/books": {
            "get": {
                "operationId": "searchBooks",
                "parameters": [
                    {"name": "query", "in": "query", "schema": {"type": "string"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "books"}},
            }
        }
    },
}
URL = "http://127.0.0.1:8080/books?query=x&limit="


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def request(secret: str, headers: dict[str, str]) -> dict[str, Any]:
    return {"request": {"method": "GET", "url": URL + secret, "headers": headers}}


# (record id, the secret, the record without its id)
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("cookie", "ck-Value-0001", request("ck-Value-0001", {"Cookie": "lang=en; sid=ck-Value-0001"})),
    (
        "set-cookie",
        "sc-Value-0002",
        request("sc-Value-0002", {"Set-Cookie": "sid=sc-Value-0002; Path=/; HttpOnly"}),
    ),
    (
        "http-cookie-line",
        "hc-Value-0003",
        {"output": f"GET {URL}hc-Value-0003\nCookie: s=hc-Value-0003"},
    ),
    ("curl-b", "cb-Value-0004", {"output": f"curl -b 'sid=cb-Value-0004' '{URL}cb-Value-0004'"}),
    (
        "basic",
        "bp-Value-0005",
        request("bp-Value-0005", {"Authorization": "Basic " + b64("alice:bp-Value-0005")}),
    ),
    ("curl-u", "cu-Value-0006", {"output": f"curl -u alice:cu-Value-0006 '{URL}cu-Value-0006'"}),
    (
        "curl-user",
        "cU-Value-0007",
        {"output": f"curl --user alice:cU-Value-0007 '{URL}cU-Value-0007'"},
    ),
    (
        "curl-oauth2",
        "ob-Value-0008",
        {"output": f"curl --oauth2-bearer ob-Value-0008 '{URL}ob-Value-0008'"},
    ),
    ("token", "tk-Value-0009", request("tk-Value-0009", {"Authorization": "token tk-Value-0009"})),
]
SECRETS = [secret for _, secret, _ in CASES] + ["id-Value-0010", "id-Value-0011"]
RECORDS = [{"id": rid, **record} for rid, _, record in CASES] + [
    # an id that is a credential, and one that is the value of the record's cookie
    {"id": "Bearer id-Value-0010", **request("seven", {})},
    {"id": "id-Value-0011", **request("x", {"Cookie": "sid=id-Value-0011"})},
]


def assert_clean(text: str) -> None:
    leaked = [s for s in SECRETS if s in text]
    assert not leaked, f"credentials leaked: {leaked}"


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "shop.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


def test_credential_values_are_registered_in_every_form() -> None:
    assert "hunter22" in credential_values("Basic " + b64("alice:hunter22"))
    assert "XYZ123" in credential_values("sid=XYZ123; Path=/; HttpOnly")
    assert "tok-1234" in credential_values("token tok-1234")
    assert "/api" not in credential_values("sid=abcd; Path=/api")


@pytest.mark.parametrize(("rid", "secret", "record"), CASES, ids=[c[0] for c in CASES])
def test_the_scanner_masks_a_reused_credential(
    spec_file: Path, rid: str, secret: str, record: dict[str, Any]
) -> None:
    scanner = Scanner(ApiCatalog.from_file(spec_file), retriever=None)
    value = record.get("output") or record["request"]
    findings = list(scanner.iter_findings(value))
    assert [(f.code, f.location) for f in findings] == [("E4.1", ("query", "limit"))]
    assert findings[0].got == REDACTED
    assert_clean(json.dumps([f.as_dict() for f in findings]) + "".join(map(str, findings)))


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "junit", "sarif", "html"])
def test_no_audit_report_shows_a_reused_credential(
    spec_file: Path, tmp_path: Path, fmt: str
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    code, out, err = cli(
        "audit", str(log), "--spec", str(spec_file), "--no-semantic", "--format", fmt
    )
    assert code == 1, err
    assert_clean(out + err)
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.splitlines()]
        assert len(rows) == len(RECORDS) and all(r["findings"] for r in rows)
        assert rows[-2]["id"] == f"Bearer {REDACTED}" and rows[-1]["id"] == REDACTED


def test_the_http_guard_masks_cookie_and_basic_values(spec_file: Path) -> None:
    catalog = ApiCatalog.from_file(spec_file)
    with Sandbox(catalog) as sandbox, requests.Session() as s:
        guard_session(s, catalog, base_url=sandbox.url)
        for secret, kwargs in [
            ("gc-Value-0012", {"headers": {"Cookie": "a=b; sid=gc-Value-0012"}}),
            ("gb-Value-0013", {"auth": ("alice", "gb-Value-0013")}),
        ]:
            SECRETS.append(secret)
            with pytest.raises(RequestRejected) as info:
                s.get(sandbox.url + "/books", params={"limit": secret}, **kwargs)
            exc = info.value
            assert REDACTED in str(exc)
            assert_clean(str(exc) + exc.feedback + exc.report + repr(exc.findings))


def test_a_run_trace_masks_a_reused_cookie_value(spec_file: Path, tmp_path: Path) -> None:
    catalog = ApiCatalog.from_file(spec_file)
    secret = "rt-Value-0014"
    SECRETS.append(secret)
    outputs = [f"GET /books?query=x&limit={secret}", "GET /books?query=x&limit=2"]

    def model(messages: list[dict[str, str]]) -> tuple[str, Usage]:
        assert_clean(json.dumps(messages[-1:]))  # the feedback the model reads, too
        return outputs.pop(0), Usage(prompt_tokens=10, completion_tokens=5)

    trace = tmp_path / "trace.jsonl"
    with Sandbox(catalog) as sandbox:
        loop = FeedbackLoop(
            CallableLLM(model),
            catalog,
            base_url=sandbox.url,
            scanner=Scanner(catalog, retriever=None),
            retrieve_docs=False,
            headers={"Cookie": f"lang=en; sid={secret}"},
        )
        result = loop.run("find books", trace=trace)
    assert len(result.attempts) == 2
    text = trace.read_text(encoding="utf-8")
    assert_clean(text)
    assert_clean("".join((a.feedback or "") + str(a.findings) for a in result.attempts))
