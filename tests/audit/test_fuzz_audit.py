"""Property-based: the audit gives exactly one result per input line, in order, whatever
the lines hold; HAR captures give one result per entry, and a capture cut anywhere
keeps every entry before the cut; chat logs never stop the reader."""

from __future__ import annotations

import io
import json
from typing import Any

from _support.fuzz_strategies import ARGS, JSON, NAMES, edited, urls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog
from autofeedback.audit._audit import audit_lines, audit_units
from autofeedback.audit._inputs import read_har, read_openai

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOOLS = [{"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}}]


@st.composite
def records(draw: st.DrawFn) -> Any:
    """A JSONL audit record, following the contract or not."""
    kind = draw(st.integers(0, 6))
    if kind == 0:
        record: Any = {"output": draw(edited())}
    elif kind == 1:
        record = {"call": {"name": draw(NAMES), "arguments": draw(st.one_of(ARGS, JSON))}}
    elif kind == 2:
        record = {
            "request": {
                "method": draw(st.sampled_from(["GET", "POST", "", "get"])),
                "url": draw(urls()),
                "params": draw(JSON),
                "headers": draw(JSON),
                "json": draw(JSON),
            }
        }
    elif kind == 3:
        record = {"tools": draw(st.one_of(st.just(TOOLS), JSON)), "call": {"name": "ping"}}
    elif kind == 4:
        record = {"id": draw(JSON), "instruction": draw(JSON), "output": draw(JSON)}
    elif kind == 5:
        record = draw(JSON)
    else:
        record = {"output": "<API>searchBooks(query='dune')</API>", "call": {}}
    return record


lines = st.one_of(
    records().map(json.dumps),
    records().map(json.dumps).map(lambda t: t[: len(t) // 2]),  # cut part-way
    st.text(max_size=60),
)


@SETTINGS
@given(st.lists(lines, min_size=1, max_size=12))
def test_one_result_per_line_in_order(bookshop: ApiCatalog, log: list[str]) -> None:
    # a line is what a file iterator yields: no newline inside one
    log = [line.replace("\n", " ").replace("\r", " ") for line in log]
    results = list(audit_lines(log, bookshop, retriever=None))
    # every line but a blank one (no record: skipped, as jq and pandas skip it)
    assert [r.line for r in results] == [i for i, x in enumerate(log, 1) if x.strip()]
    for r in results:
        assert r.ok is (r.error is None and not any(f.severity == "error" for f in r.findings))
        assert r.error is None or "\n" not in r.error
        json.dumps(r.as_dict(), default=str)


@st.composite
def har_entries(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    headers = st.lists(
        st.fixed_dictionaries({"name": st.text(max_size=12), "value": st.text(max_size=12)}),
        max_size=3,
    )
    return {
        "request": {
            "method": draw(st.sampled_from(["GET", "POST", "", None])),
            "url": draw(urls()),
            "headers": draw(st.one_of(headers, JSON)),
            "queryString": draw(st.one_of(st.just([]), JSON)),
            "postData": draw(
                st.one_of(
                    st.fixed_dictionaries(
                        {
                            "mimeType": st.sampled_from(["application/json", "text/plain", ""]),
                            "text": st.one_of(ARGS.map(json.dumps), st.text(max_size=20)),
                        }
                    ),
                    JSON,
                )
            ),
        }
    }


@SETTINGS
@given(st.lists(har_entries(), max_size=6), st.data())
def test_har_entries_and_cuts(
    bookshop: ApiCatalog, entries: list[Any], data: st.DataObject
) -> None:
    text = json.dumps({"log": {"version": "1.2", "entries": entries}})
    units = list(read_har(io.StringIO(text)))
    assert [u.line for u in units] == [1] * len(entries)  # one line: json.dumps has no newlines
    assert len(units) == len(entries)
    results = list(audit_units(units, bookshop, retriever=None))
    assert len(results) == len(entries)

    # cut the file anywhere: every entry that ends before the cut is still read
    cut = data.draw(st.integers(0, len(text)))
    partial = list(read_har(io.StringIO(text[:cut])))
    complete = [
        i
        for i in range(len(entries))
        if len(json.dumps({"log": {"version": "1.2", "entries": entries[: i + 1]}})) - 3 <= cut
    ]
    n = len(complete)
    assert [(u.record, u.error) for u in partial[:n]] == [(u.record, u.error) for u in units[:n]]
    assert len(list(audit_units(partial, bookshop, retriever=None))) == len(partial)


@SETTINGS
@given(st.lists(st.one_of(JSON.map(json.dumps), st.text(max_size=40)), min_size=1, max_size=6))
def test_chat_logs_never_stop_the_reader(bookshop: ApiCatalog, log: list[str]) -> None:
    log = [line.replace("\n", " ") for line in log]
    units = list(read_openai(log))
    assert {u.line for u in units} <= set(range(1, len(log) + 1))
    assert len(list(audit_units(units, bookshop, retriever=None))) == len(units)
