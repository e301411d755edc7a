"""Query values typed only through a composition are read from their text form like
plainly typed ones (issue 18 item 9: ``paused=false`` against
``{oneOf: [{$ref: ...boolean}]}`` was "must be a boolean, got string 'false'")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, Scanner

TYPES = {"paused": "boolean", "ratio": "number", "limit": "integer"}


def _catalog(wrap: str) -> ApiCatalog:
    def schema(name: str) -> dict[str, Any]:
        ref = {"$ref": f"#/components/schemas/{name}"}
        if wrap == "plain":
            return ref
        if wrap == "nullable-anyOf":
            return {"anyOf": [ref, {"type": "null"}]}
        if wrap == "nested":
            return {"allOf": [{"oneOf": [ref]}], "description": "x"}
        return {wrap: [ref]}

    params = [{"name": n, "in": "query", "schema": schema(n)} for n in TYPES]
    return ApiCatalog.from_obj(
        {
            "openapi": "3.0.3",
            "paths": {
                "/jobs": {"get": {"operationId": "listJobs", "parameters": params, "responses": {}}}
            },
            "components": {"schemas": {n: {"type": t} for n, t in TYPES.items()}},
        }
    )


WRAPS = ["plain", "oneOf", "allOf", "anyOf", "nullable-anyOf", "nested"]
SCANNERS = {w: Scanner(_catalog(w), retriever=None) for w in WRAPS}


@pytest.mark.parametrize("wrap", WRAPS[1:])
def test_composed_query_values_are_read_from_their_text(wrap: str) -> None:
    scanner = SCANNERS[wrap]
    assert list(scanner.iter_findings("GET /jobs?paused=false&ratio=0.5&limit=3")) == []
    bad = list(scanner.iter_findings("GET /jobs?paused=nope&ratio=x&limit=2.5"))
    assert sorted(f.location[-1] for f in bad) == ["limit", "paused", "ratio"]
    assert all(f.code == "E4.1" for f in bad)


_text = st.one_of(
    st.sampled_from(["true", "false", "0", "-1", "1e3", "2.5", "NaN", "", "null", " 7"]),
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=False).map(str),
    st.text(max_size=6),
)


@settings(max_examples=150, deadline=None)
@given(wrap=st.sampled_from(WRAPS[1:]), values=st.tuples(_text, _text, _text))
def test_a_composition_of_one_branch_judges_like_the_branch(
    wrap: str, values: tuple[str, str, str]
) -> None:
    from urllib.parse import urlencode

    url = "GET /jobs?" + urlencode(dict(zip(TYPES, values, strict=True)))

    def verdict(scanner: Scanner) -> list[tuple[str, str]]:
        return sorted((f.code, f.location[-1]) for f in scanner.iter_findings(url))

    plain = verdict(SCANNERS["plain"])
    composed = verdict(SCANNERS[wrap])
    if wrap == "nullable-anyOf":  # also accepts what reads as null
        assert set(composed) <= set(plain)
    else:
        assert composed == plain
