"""Redaction covers repairs everywhere (issue 43): ``audit --fix``'s ``repaired`` call in
every report format, payment and personal secrets, and credentials under a name the
model misspelt by one slip of the keyboard. (The proxies' surfaces: tests/integrations/
test_proxy.py and test_mcp_proxy.py; the requests guard: test_adapter_sent.py.)"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from autofeedback.cli import run
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._redact import (
    REDACTED,
    is_sensitive,
    redact,
    redact_finding,
    redact_repair,
    value_secrets,
)

SECRETS = ("QUERY-SIG-0a1b2c", "QUERY-TOKEN-3d4e5f", "HEADER-KEY-6a7b8c", "BEARER-9d0e1f")

#: an API whose credentials are a header key, a bearer token and a query signature (its
#: securitySchemes), used with a generic ``token`` in the query too
SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "items", "version": "1"},
    "servers": [{"url": "https://api.example.org"}],
    "components": {
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "sig": {"type": "apiKey", "in": "query", "name": "sig"},
        }
    },
    "security": [{"key": []}, {"bearer": []}, {"sig": []}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "token", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}

RECORDS = [
    {
        "id": "request",
        "request": {
            "method": "GET",
            "url": f"https://api.example.org/items?Limit=5&sig={SECRETS[0]}&token={SECRETS[1]}",
            "headers": {"X-Api-Key": SECRETS[2], "Authorization": f"Bearer {SECRETS[3]}"},
        },
    },
    {
        # the same call as text the model wrote
        "id": "output",
        "output": f"GET https://api.example.org/items?Limit=5&sig={SECRETS[0]}&token={SECRETS[1]}",
    },
]


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif", "junit", "html"])
def test_audit_fix_writes_no_credential_in_any_report(tmp_path: Path, fmt: str) -> None:
    spec = tmp_path / "items.json"
    spec.write_text(json.dumps(SPEC))
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    out, err = io.StringIO(), io.StringIO()
    argv = ["audit", str(log), "--spec", str(spec), "--no-semantic", "--fix", "--format", fmt]
    code = run(argv, stdout=out, stderr=err, stdin=io.StringIO())
    assert code == 1, err.getvalue()
    shown = out.getvalue() + err.getvalue()
    for secret in SECRETS:
        assert secret not in shown, (fmt, secret)
    if fmt in ("jsonl", "json"):
        rows = (
            [json.loads(x) for x in shown.splitlines() if x.strip()]
            if fmt == "jsonl"
            else json.loads(shown)["records"]
        )
        repaired = {row["id"]: row["repaired"] for row in rows}
        # repaired, and still the call it was: only the credentials masked
        assert repaired["request"]["url"] == (
            f"https://api.example.org/items?limit=5&sig={REDACTED}&token={REDACTED}"
        )
        assert repaired["request"]["headers"] == {
            "X-Api-Key": REDACTED,
            "Authorization": REDACTED,
        }
        assert "limit=5" in repaired["output"] and REDACTED in repaired["output"]


@pytest.mark.parametrize(
    "name",
    [
        "api_kye",
        "apiKye",
        "X-Api-Kye",
        "passwrod",
        "acces_tokne",
        "Authorizaton",
        "sesion_id",
        "clinet_secret",
        "cvv",
        "card_number",
        "cardNumber",
        "security_code",
        "ssn",
        "pin",
    ],
)
def test_secrets_and_names_one_slip_from_them_are_sensitive(name: str) -> None:
    assert is_sensitive(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "tokens", "tokenizer", "author", "keyword", "taken", "passed", "pinned"],
)
def test_other_words_stay_readable(name: str) -> None:
    assert not is_sensitive(name)


def test_a_short_secret_value_leaves_the_message_of_its_finding() -> None:
    f = Finding("E4.1", ("argument", "cvv"), "987", message="cvv must be an integer, got '987'")
    shown = redact_finding(f)
    assert shown.got == REDACTED and "987" not in shown.message


def test_a_value_repair_at_a_secret_is_masked_before_and_after() -> None:
    r = redact_repair(Repair("E4.1", ("argument", "cvv"), "987", 987))
    assert (r.before, r.after) == (REDACTED, REDACTED) and "987" not in str(r)
    assert redact({"card": {"api_kye": "kye-123456"}}) == {"card": {"api_kye": REDACTED}}


def test_the_credentials_a_url_carries_are_known_secrets() -> None:
    found = value_secrets({"url": "https://u:pw-123456@h/x?sig=S1G-789&q=1"}, names=["sig"])
    assert {"pw-123456", "S1G-789"} <= set(found)
