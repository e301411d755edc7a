"""A HAR capture's cookies are the parameters a spec documents ``in: cookie``: they are
read as the browser sent them and checked, and their values are masked wherever the
audit shows them. Before, the whole ``Cookie`` header was masked when the capture was
read, so a required cookie that was sent was reported missing (E3.4) and a cookie's
value was never checked."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback.audit._inputs import har_request, har_session_record
from autofeedback.cli import run

SESSION = "s3ss10n-9f8e7d6c5b4a"
SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "https://shop.example.com"}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "listItems",
                "parameters": [
                    {
                        "name": "page",
                        "in": "cookie",
                        "required": True,
                        "schema": {"type": "integer", "maximum": 10},
                    },
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def entry(cookie: str | None, url: str = "https://shop.example.com/items?limit=5") -> Any:
    headers = [{"name": "Accept", "value": "application/json"}]
    if cookie is not None:
        headers.append({"name": "Cookie", "value": cookie})
    return {"request": {"method": "GET", "url": url, "headers": headers}}


def audit(tmp_path: Path, *entries: Any, fmt: str = "jsonl", fix: bool = False) -> tuple[int, str]:
    spec = tmp_path / "shop.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"entries": list(entries)}}), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    argv = ["audit", str(har), "--spec", str(spec), "--no-semantic", "--format", fmt]
    code = run([*argv, *(["--fix"] if fix else [])], stdout=out, stderr=err)
    return code, out.getvalue() + err.getvalue()


def test_a_required_cookie_in_the_capture_is_sent_and_checked(tmp_path: Path) -> None:
    code, out = audit(
        tmp_path,
        entry(f"page=2; sid={SESSION}"),
        entry(f"sid={SESSION}; page=twelve"),
        entry(f"sid={SESSION}"),
    )
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["id"], r["ok"]) for r in rows] == [(1, True), (2, False), (3, False)]
    assert [(f["code"], f["location"], f["message"]) for f in rows[1]["findings"]] == [
        ("E4.1", ["cookie", "page"], "page must be an integer, got string '[REDACTED]'")
    ]
    assert [(f["code"], f["message"]) for f in rows[2]["findings"]] == [
        ("E3.4", "required cookie parameter 'page' is missing")
    ]
    assert SESSION not in out and "twelve" not in out
    assert code == 1


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "junit", "sarif", "html"])
def test_no_cookie_value_reaches_any_report(tmp_path: Path, fmt: str) -> None:
    code, out = audit(
        tmp_path, entry(f"page=twelve; sid={SESSION}", url="https://shop.example.com/items?limt=5")
    )
    assert code == 1
    code, out = audit(
        tmp_path,
        entry(f"page=twelve; sid={SESSION}", url="https://shop.example.com/items?limt=5"),
        fmt=fmt,
        fix=True,
    )
    assert code == 1 and out
    assert SESSION not in out and "twelve" not in out


def test_the_record_keeps_the_cookie_header_and_masks_every_other_credential() -> None:
    record = har_request(
        {
            "request": {
                "method": "GET",
                "url": f"https://shop.example.com/items?echo={SESSION}",
                "headers": [
                    {"name": "Authorization", "value": "Bearer tok-123456789"},
                    {"name": "cookie", "value": f"page=2; sid={SESSION}"},
                    {"name": "Accept", "value": "*/*"},
                ],
            }
        }
    )
    # the headers in their order; the session's value is masked where it shows up again
    assert record == {
        "method": "GET",
        "url": "https://shop.example.com/items?echo=[REDACTED]",
        "headers": {
            "Authorization": "[REDACTED]",
            "cookie": f"page=2; sid={SESSION}",
            "Accept": "*/*",
        },
    }


def test_a_session_record_reads_the_cookies_too(tmp_path: Path) -> None:
    record = har_session_record({"log": {"entries": [entry(f"page=2; sid={SESSION}")]}})
    assert record["steps"][0]["request"]["headers"]["Cookie"] == f"page=2; sid={SESSION}"
