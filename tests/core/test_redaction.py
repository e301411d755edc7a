"""One redaction, everywhere: a log full of credentials goes through every output the
product has (audit reports in all six formats, the scan CLI, the HTTP guard's
exceptions, warnings and log lines, the loop's trace) and none of them survives."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from autofeedback import ApiCatalog, Scanner
from autofeedback.cli import run
from autofeedback.core._redact import REDACTED, is_sensitive, redact, redact_finding
from autofeedback.integrations._adapter import AutoFeedbackWarning, RequestRejected, guard_session
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.serve._sandbox import Sandbox

# every one of these must be masked wherever it would appear
SECRETS = {
    "bearer": "SECRET-BEARER-1111",
    "proxy": "SECRET-PROXY-2222",
    "cookie": "SECRET-COOKIE-3333",
    "apikey": "SECRET-APIKEY-4444",
    "query": "SECRET-QUERY-5555",
    "userinfo": "SECRET-PASS-6666",
    "body": "SECRET-BODY-7777",
    "argument": "SECRET-ARG-8888",
    "spec": "SECRET-SPEC-9999",
    "echoed": "SECRET-ECHO-AAAA",
    "raw": "SECRET-RAW-BBBB",
    "token": "SECRET-TOKEN-CCCC",
}

# the bookshop, plus the spec's own credential names: an API key in the query called
# ``sig`` and a header ``X-Shop-Ident`` (names no built-in list would know)
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:8080"}],
    "components": {
        "securitySchemes": {
            "sig": {"type": "apiKey", "in": "query", "name": "sig"},
            "ident": {"type": "apiKey", "in": "header", "name": "X-Shop-Ident"},
        }
    },
    "security": [{"sig": []}, {"ident": []}],
    "paths": {
        "/books": {
            "get": {
                "operationId": "searchBooks",
                "parameters": [
                    {
                        "name": "query",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "books"}},
            }
        },
        "/login": {
            "post": {
                "operationId": "login",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["username"],
                                "properties": {
                                    "username": {"type": "string"},
                                    "remember": {"type": "boolean"},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}

S = SECRETS
RECORDS: list[dict[str, Any]] = [
    # headers of every credential kind, and a wrong value type so there are findings
    {
        "id": "headers",
        "request": {
            "method": "GET",
            "url": f"http://127.0.0.1:8080/books?query=x&limit=ten&api_key={S['query']}",
            "headers": {
                "Authorization": f"Bearer {S['bearer']}",
                "Proxy-Authorization": f"Basic {S['proxy']}",
                "Cookie": f"session={S['cookie']}",
                "X-API-Key": S["apikey"],
            },
        },
    },
    # user info in the URL (and a host check that quotes the netloc)
    {
        "id": "userinfo",
        "request": {"method": "GET", "url": f"http://bob:{S['userinfo']}@10.0.0.1:9/books?q=1"},
    },
    # password and token fields in a body
    {
        "id": "body",
        "request": {
            "method": "POST",
            "url": "http://127.0.0.1:8080/login",
            "json": {"password": S["body"], "remember": "yes", "refresh_token": S["token"]},
        },
    },
    # a credential passed as an argument the operation does not take
    {"id": "argument", "call": {"name": "searchBooks", "arguments": {"password": S["argument"]}}},
    # the spec's own API-key name, on a wrong path
    {"id": "spec", "output": f"GET /bookz?query=x&sig={S['spec']}"},
    # a secret value echoed where it is not a credential by name
    {
        "id": "echoed",
        "request": {
            "method": "GET",
            "url": f"http://127.0.0.1:8080/books?query=x&limit={S['echoed']}",
            "headers": {"Authorization": f"Bearer {S['echoed']}"},
        },
    },
    # raw model output that cannot be parsed, full of credentials
    {
        "id": "raw",
        "output": (
            f"curl -X POST http://1[27.0.0.1:8080/orders -H 'Authorization: Bearer {S['raw']}'"
            f" -u admin:{S['raw']}"
        ),
    },
    {"id": "raw2", "output": f'{{"password": "{S["raw"]}", "cookie": "{S["raw"]}" ((('},
]


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "shop.yaml"
    path.write_text(yaml.safe_dump(SPEC), encoding="utf-8")
    return path


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


def assert_clean(text: str) -> None:
    leaked = [name for name, value in SECRETS.items() if value in text]
    assert not leaked, f"credentials leaked: {leaked}"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "junit", "sarif", "html"])
def test_no_credential_survives_any_audit_report(spec_file: Path, log_file: Path, fmt: str) -> None:
    code, out, err = cli(
        "audit", str(log_file), "--spec", str(spec_file), "--no-semantic", "--format", fmt
    )
    assert (code, err) == (1, "")  # findings in every record, none it could not check
    assert out and REDACTED in out
    assert_clean(out + err)


def test_every_record_was_reported_with_findings(spec_file: Path, log_file: Path) -> None:
    code, jsonl, _ = cli(
        "audit", str(log_file), "--spec", str(spec_file), "--no-semantic", "--format", "jsonl"
    )
    results = [json.loads(line) for line in jsonl.splitlines()]
    assert code == 1
    assert [r["id"] for r in results] == [r["id"] for r in RECORDS]
    # each record checked (no "error": the bracketed host is an E1 finding), with the
    # findings it must draw
    codes = {r["id"]: [f["code"] for f in r["findings"]] for r in results if "error" not in r}
    assert codes == {
        "headers": ["E3", "E4.1"],
        "userinfo": ["E2"],
        "body": ["E3", "E3", "E3.4", "E4.1"],
        "argument": ["E3", "E3.4"],
        "spec": ["E2"],
        "echoed": ["E4.1"],
        "raw": ["E1"],
        "raw2": ["E1"],
    }
    # what was masked is still reported: the finding is there, only the value is not
    by_id = {r["id"]: r for r in results}
    # an unknown-name finding shows the name (the fix needs it), never the value
    argument = by_id["argument"]["findings"][0]
    assert (argument["code"], argument["got"]) == ("E3", "password")
    assert S["argument"] not in json.dumps(by_id["argument"])
    assert by_id["echoed"]["findings"][0]["location"] == ["query", "limit"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_credential_survives_the_scan_cli(spec_file: Path, fmt: str) -> None:
    for record in RECORDS:
        value = record.get("output") or json.dumps(record.get("call") or record["request"])
        code, out, err = cli(
            "scan", "--spec", str(spec_file), "--no-semantic", "--format", fmt, value
        )
        assert code in (0, 1), err
        assert_clean(out + err)


def test_no_credential_survives_the_scanner_api(spec_file: Path) -> None:
    scanner = Scanner(ApiCatalog.from_file(spec_file), retriever=None)
    for record in RECORDS:
        value = record.get("output") or record.get("call") or record["request"]
        findings = list(scanner.iter_findings(value))
        assert findings
        assert_clean(json.dumps([f.as_dict() for f in findings]) + "".join(map(str, findings)))


def test_no_credential_survives_the_http_guard(
    spec_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = ApiCatalog.from_file(spec_file)
    with Sandbox(catalog) as sandbox, requests.Session() as s:
        guard_session(s, catalog, base_url=sandbox.url)
        port = sandbox.url.rsplit(":", 1)[1]
        url = f"http://bob:{S['userinfo']}@127.0.0.1:{port}/books"
        params = {"query": "x", "limit": S["echoed"], "sig": S["spec"], "token": S["token"]}
        # requests turns the user info into the Authorization header it sends
        headers = {"Cookie": f"sid={S['cookie']}", "X-Shop-Ident": S["echoed"]}
        with pytest.raises(RequestRejected) as info:
            s.get(url, params=params, headers=headers)
        exc = info.value
        assert_clean(str(exc) + exc.feedback + exc.report + repr(exc.findings))
        assert REDACTED in str(exc)

        warn = requests.Session()
        guard_session(warn, catalog, mode="warn", base_url=sandbox.url)
        with pytest.warns(AutoFeedbackWarning) as caught:
            warn.get(url, params=params, headers=headers)
        assert_clean("".join(str(w.message) for w in caught))

        logged = requests.Session()
        guard_session(logged, catalog, mode="log", base_url=sandbox.url)
        with caplog.at_level(logging.WARNING, logger="autofeedback"):
            logged.get(url, params=params, headers=headers)
        assert caplog.records and REDACTED in caplog.text
        assert_clean(caplog.text)
        warn.close()
        logged.close()


def test_no_credential_survives_a_loop_trace(spec_file: Path, tmp_path: Path) -> None:
    catalog = ApiCatalog.from_file(spec_file)
    outputs = [
        # the model writes credentials into its request; the static check rejects it
        f"GET /books?query=x&limit=ten&sig={S['spec']}&password={S['body']}",
        f"curl -X POST http://admin:{S['userinfo']}@127.0.0.1:8080/login "
        f'-H "Authorization: Bearer {S["raw"]}" -d \'{{"username": "u", "password": '
        f'"{S["argument"]}"}}\'',
    ]

    def model(messages: list[dict[str, str]]) -> tuple[str, Usage]:
        return outputs.pop(0), Usage(prompt_tokens=10, completion_tokens=5)

    trace = tmp_path / "trace.jsonl"
    with Sandbox(catalog) as sandbox:
        loop = FeedbackLoop(
            CallableLLM(model),
            catalog,
            base_url=sandbox.url,
            scanner=Scanner(catalog, retriever=None),
            retrieve_docs=False,
            max_static=1,
            headers={"Authorization": f"Bearer {S['bearer']}", "X-Shop-Ident": S["apikey"]},
        )
        result = loop.run("log in as u", trace=trace)
    text = trace.read_text(encoding="utf-8")
    assert len(result.attempts) == 2 and REDACTED in text
    assert_clean(text)
    assert_clean("".join((a.feedback or "") + str(a.findings) for a in result.attempts))


def test_har_and_chat_logs_are_redacted_too(spec_file: Path, tmp_path: Path) -> None:
    har = {
        "log": {
            "entries": [
                {
                    "request": {
                        "method": "GET",
                        "url": f"http://u:{S['userinfo']}@127.0.0.1:8080/books?limit={S['echoed']}",
                        "headers": [
                            {"name": "Authorization", "value": f"Bearer {S['echoed']}"},
                            {"name": "Cookie", "value": f"a={S['cookie']}"},
                        ],
                        "postData": {
                            "mimeType": "application/json",
                            "text": json.dumps({"password": S["body"]}),
                        },
                    }
                }
            ]
        }
    }
    har_path = tmp_path / "capture.har"
    har_path.write_text(json.dumps(har), encoding="utf-8")
    for fmt in ("jsonl", "sarif", "html"):
        code, out, err = cli(
            "audit", str(har_path), "--spec", str(spec_file), "--no-semantic", "--format", fmt
        )
        assert code == 1, err
        assert_clean(out + err)


# -- the function itself ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sensitive"),
    [
        ("Authorization", True),
        ("Proxy-Authorization", True),
        ("Set-Cookie", True),
        ("x-api-key", True),
        ("clientSecret", True),
        ("refresh_token", True),
        ("db_password", True),
        ("X-Amz-Security-Token", True),
        ("max_tokens", False),
        ("author", False),
        ("keyword", False),
        ("query", False),
    ],
)
def test_sensitive_names(name: str, sensitive: bool) -> None:
    assert is_sensitive(name) is sensitive


def test_redact_walks_values_and_text() -> None:
    value = {
        "headers": {"Authorization": "Bearer abcd", "Accept": "json"},
        "body": [{"password": "pw123", "user": "ann"}],
        "note": "GET https://ann:pw123@h/x?token=zz99&q=1",
    }
    assert redact(value) == {
        "headers": {"Authorization": REDACTED, "Accept": "json"},
        "body": [{"password": REDACTED, "user": "ann"}],
        "note": f"GET https://REDACTED@h/x?token={REDACTED}&q=1",
    }


def test_redact_finding_keeps_what_is_not_a_credential() -> None:
    from autofeedback.core._findings import Finding

    f = Finding(
        "E4.1", ("query", "limit"), "s3cr3t", message="limit must be an integer, got s3cr3t"
    )
    masked = redact_finding(f, secrets=["s3cr3t"])
    assert masked.got == REDACTED and "s3cr3t" not in masked.message
    assert redact_finding(f) == f


@pytest.mark.parametrize(
    "text",
    [
        '"password": "' + "\\" * 5000 + "x",  # was exponential: one way to match a quoted value
        "\x00" * 200_000 + "@",
        "[" * 200_000 + "@a",
        'a:"' * 50_000,
        "a=" * 100_000,
        "-" * 200_000 + "\n",
        "http://" * 30_000 + "@",
    ],
    ids=["backslashes", "nul", "brackets", "quotes", "pairs", "dashes", "schemes"],
)
def test_redaction_is_linear_on_hostile_text(text: str) -> None:
    # no timing assertion: a pattern that backtracks makes this test hang, not fail
    assert len(redact(text)) >= len(text) // 2


def test_a_huge_value_is_shown_by_its_start() -> None:
    from autofeedback.core._findings import Finding

    f = Finding("E4.1", ("query", "limit"), "x" * 1_000_000, message="not an integer")
    assert len(redact_finding(f).got) == 4096 + 3


@pytest.mark.parametrize(
    "text",
    [
        "E4.1 query.token: token must be an integer, got string 'abc'",
        "basic rules apply to the author and the keyword",
        "unknown query parameter 'password'; searchBooks takes: query, limit",
        "max_tokens=5&query=dune&limit=10",
        "GET /books?query=dune HTTP/1.1",
        "time 12:30, ratio 3:4",
    ],
)
def test_prose_and_non_credentials_stay_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "junit", "sarif", "html"])
def test_the_issue_password_in_a_url_is_in_no_report(tmp_path: Path, fmt: str) -> None:
    bookshop = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
    record = {
        "request": {
            "method": "POST",
            "url": "https://user:PASSWORD@127.0.0.1:8080/orders",
            "json": {"book_id": "seven", "quantity": 1},
        }
    }
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, out, err = cli(
        "audit", str(log), "--spec", str(bookshop), "--no-semantic", "--format", fmt
    )
    assert code == 1, err
    assert "PASSWORD" not in out + err and "E4.1" in out
    # the host check compares the host, not the user info in front of it
    assert "user:" not in out


def test_a_relative_urls_query_credential_is_found_as_an_absolute_ones() -> None:
    from autofeedback.core._redact import value_secrets

    relative = {"url": "/items?q=dune&shoppass=s3cretV4lue"}
    absolute = {"url": "https://shop.test/items?q=dune&shoppass=s3cretV4lue"}
    assert value_secrets(relative, ["shoppass"]) == ["s3cretV4lue"]
    assert value_secrets(absolute, ["shoppass"]) == ["s3cretV4lue"]
    # where the value is repeated, it is masked too
    shown = redact(["s3cretV4lue", relative], secrets=value_secrets(relative, ["shoppass"]))
    assert "s3cretV4lue" not in json.dumps(shown)
    assert value_secrets({"path": "/users/@me"}) == []
