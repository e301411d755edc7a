"""The E2 path of HTTP requests (issue 18 item 8): what does not change per request is
worked out once per catalog, and a log that repeats a mistake pays for it once."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, ApiRequest, Scanner
from autofeedback.checks._check_name import check_name

WORDS = ["books", "authors", "orders", "users", "reviews", "stores", "items", "tags"]


def _catalog(n: int) -> ApiCatalog:
    paths: dict[str, Any] = {}
    for i in range(n):
        a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
        paths[f"/v{i}/{a}/{{id}}/{b}"] = {
            "get": {"operationId": f"op{i}", "responses": {}},
            "post": {"operationId": f"post{i}", "responses": {}},
        }
    return ApiCatalog.from_obj({"openapi": "3.0.0", "paths": paths})


BIG = _catalog(1_000)  # 2,000 operations


def _codes(scanner: Scanner, url: str) -> list[tuple[str, Any, Any]]:
    return [(f.code, f.suggestion, f.message) for f in scanner.iter_findings(url)]


def test_a_repeated_mistake_is_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log repeats its mistakes: each distinct unknown endpoint is worked out once per
    catalog, every repeat is the memo's answer (the speed this buys is measured by
    ``benchmarks/speed.py --only-e2``, not asserted here)."""
    from autofeedback.checks import _check_name

    worked_out: list[str] = []
    unknown_endpoint = _check_name._unknown_endpoint

    def counted(index: Any, catalog: Any, method: str, path: str, *rest: Any) -> Any:
        worked_out.append(f"{method} {path}")
        return unknown_endpoint(index, catalog, method, path, *rest)

    monkeypatch.setattr(_check_name, "_unknown_endpoint", counted)
    scanner = Scanner(BIG, retriever=None)
    mistakes = [f"GET /v{i}/bokos/7/authors" for i in range(0, 1_000, 50)]  # 20 distinct
    first = [_codes(scanner, m) for m in mistakes]
    for _ in range(10):
        again = [_codes(scanner, m) for m in mistakes]
    assert again == first and all(c[0][0] == "E2" for c in first)
    assert len(worked_out) == len(set(worked_out)) == len(mistakes)


@pytest.mark.parametrize("semantic", [False, True])
def test_a_repeated_mistake_is_the_memo_s_answer(semantic: bool, api_retriever: Any) -> None:
    """The memo seen without patching a module function (which mutation testing's
    trampolines bypass): a repeat is answered with the very verdict worked out the first
    time, with a name matcher (the real model) and without one."""
    catalog = _catalog(40)
    matcher = api_retriever if semantic else None
    request = ApiRequest(method="GET", url="/v3/bokos/7/authors")
    first = check_name(request, catalog, matcher=matcher)
    again = check_name(request, catalog, matcher=matcher)
    assert [(f.code, f.suggestion) for f in first.findings] == [
        ("E2", "GET /v8/books/{id}/authors")
    ]
    assert again is first


def test_the_memo_keeps_the_verdict_of_each_matcher(api_retriever: Any) -> None:
    catalog = _catalog(40)
    request = ApiRequest(method="GET", url="/v3/bokos/7/authors")
    with_model = check_name(request, catalog, matcher=api_retriever)
    without = check_name(request, catalog)
    assert without is not with_model
    assert check_name(request, catalog, matcher=api_retriever) is with_model


def test_the_memo_starts_over_past_4096_verdicts() -> None:
    catalog = _catalog(40)
    mistakes = [ApiRequest(method="GET", url=f"/v3/bokos/{i}/x") for i in range(4097)]
    first = check_name(mistakes[0], catalog)
    for mistake in mistakes[1:4096]:
        check_name(mistake, catalog)
    assert check_name(mistakes[0], catalog) is first  # 4,096 verdicts kept
    check_name(mistakes[4096], catalog)  # the 4,097th: the memo starts over
    assert check_name(mistakes[0], catalog) is not first


def test_a_scanner_with_a_model_answers_a_repeated_mistake_from_the_memo(
    api_retriever: Any,
) -> None:
    # the comparisons on this catalog stay under the 64 names that have the scanner load
    # every name at once: the scanner's matcher is the same from one request to the next
    scanner = Scanner(_catalog(40), retriever=api_retriever)
    first = list(scanner.iter_findings("GET /v3/bokos/7/authors"))
    again = list(scanner.iter_findings("GET /v3/bokos/7/authors"))
    assert [f.code for f in first] == ["E2"]
    assert len(again) == 1 and again[0] is first[0]


SMALL = _catalog(40)


@settings(max_examples=120, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "DELETE"]),
    segments=st.lists(
        st.one_of(
            st.sampled_from(["v3", "V3", "v_3", "books", "Books", "book-s", "7", "{id}"]),
            st.sampled_from(WORDS),
            st.text("abcdefgh_-", min_size=1, max_size=6),
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_the_verdict_on_a_path_is_the_same_every_time(method: str, segments: list[str]) -> None:
    url = f"{method} /" + "/".join(segments)
    fresh = _codes(Scanner(_catalog(40), retriever=None), url)  # a new catalog, new index
    shared = Scanner(SMALL, retriever=None)
    assert _codes(shared, url) == fresh
    assert _codes(shared, url) == fresh  # from the memo


def test_a_literal_variant_of_a_path_is_still_e2_2() -> None:
    scanner = Scanner(SMALL, retriever=None)
    [f] = scanner.iter_findings("GET /V0/Books/7/Books")
    assert (f.code, f.suggestion) == ("E2.2", "GET /v0/books/{id}/books")
    [f] = scanner.iter_findings("PUT /v0/books/7/books")
    assert (f.code, f.location, f.expected) == ("E2", ("method",), ["GET", "POST"])
