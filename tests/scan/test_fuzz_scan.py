"""Property-based: ``Scanner.iter_findings`` never raises on model output, whatever the
format, however it is broken; credentials it was given never come back out.

Budgets suit CI (a few hundred examples per property, well under a minute in all);
``benchmarks/fuzz.py`` runs a million generated inputs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _support.fuzz_strategies import ARGS, JSON, NAMES, edited, formatted, urls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, Scanner
from autofeedback.core._findings import Finding

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scanner(bookshop: ApiCatalog) -> Scanner:
    return Scanner(bookshop, retriever=None)


def check(scanner: Scanner, output: Any) -> list[Finding]:
    findings = list(scanner.iter_findings(output, instruction="find books"))
    assert all(isinstance(f, Finding) for f in findings)
    for f in findings:
        json.dumps(f.as_dict())  # every finding can be reported
        assert str(f)
    return findings


@SETTINGS
@given(output=st.one_of(formatted(), edited(), st.text(max_size=200)))
def test_any_text_output(scanner: Scanner, output: str) -> None:
    check(scanner, output)


@SETTINGS
@given(name=NAMES, arguments=st.one_of(ARGS, JSON))
def test_any_call_record(scanner: Scanner, name: str, arguments: Any) -> None:
    check(scanner, {"name": name, "arguments": arguments})


@SETTINGS
@given(
    method=st.one_of(st.sampled_from(["GET", "POST", "delete", ""]), st.text(max_size=6)),
    url=urls(),
    params=st.one_of(ARGS, JSON),
    headers=st.one_of(st.dictionaries(st.text(max_size=10), st.text(max_size=10)), JSON),
    body=JSON,
)
def test_any_request_record(
    scanner: Scanner, method: str, url: str, params: Any, headers: Any, body: Any
) -> None:
    check(
        scanner, {"method": method, "url": url, "params": params, "headers": headers, "json": body}
    )


@SETTINGS
@given(value=JSON)
def test_any_json_value_as_output(scanner: Scanner, value: Any) -> None:
    check(scanner, json.dumps(value))
    if isinstance(value, dict):
        check(scanner, value)


SECRET = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=10, max_size=20).map(
    lambda s: "SK" + s
)


@SETTINGS
@given(secret=SECRET, url=urls(), where=st.integers(0, 5))
def test_credentials_never_come_back_out(
    scanner: Scanner, secret: str, url: str, where: int
) -> None:
    request: dict[str, Any] = {"method": "GET", "url": "http://127.0.0.1:8080/books?limit=x"}
    if where == 0:
        request["headers"] = {"Authorization": f"Bearer {secret}"}
        request["params"] = {"query": secret}  # the same value echoed where it is not one
    elif where == 1:
        request["url"] = f"http://user:{secret}@127.0.0.1:8080/nowhere?q=1"
    elif where == 2:
        request["url"] = f"{url}?api_key={secret}" if "?" not in url else f"{url}&token={secret}"
    elif where == 3:
        request = {"method": "POST", "url": "/orders", "json": {"password": secret, "x": secret}}
    elif where == 4:
        request = {"name": "searchBooks", "arguments": {"client_secret": secret, "query": 1}}
    else:
        text = f"curl -H 'X-Api-Key: {secret}' 'http://a:{secret}@1[27.0.0.1/x?token={secret}'"
        findings = check(scanner, text)
        assert secret not in json.dumps([f.as_dict() for f in findings], ensure_ascii=False)
        return
    findings = check(scanner, request)
    assert secret not in json.dumps([f.as_dict() for f in findings], ensure_ascii=False)
    assert all(secret not in str(f) for f in findings)
