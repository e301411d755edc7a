"""Hypothesis strategies for everything autofeedback reads: LLM outputs in every format
(and randomly edited), JSON values, URLs. Shared by the ``test_fuzz_*`` modules."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

NAMES = st.one_of(
    st.sampled_from(["searchBooks", "search_books", "getBook", "createOrder", "listReviews"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,20}", fullmatch=True),
    st.text(max_size=12),
)
KEYS = st.one_of(
    st.sampled_from(["query", "limit", "limt", "genre", "bookId", "quantity", "api_key"]),
    st.text(max_size=10),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ARGS = st.dictionaries(KEYS, JSON, max_size=4)
HOSTS = st.one_of(
    st.sampled_from(
        [
            "127.0.0.1:8080",
            "[::1]:8080",
            "[::1",
            "1[27.0.0.1:8080",
            "user:PASSWORD@127.0.0.1:8080",
            "EXAMPLE.org.",
            "bücher.de",
            "127.0.0.1:99999",
            "[]",
            "",
        ]
    ),
    st.text(max_size=15),
)
PATHS = st.one_of(
    st.sampled_from(["/books", "/books/7", "/orders", "/", "", "/%zz", "/books/{id}"]),
    st.text(max_size=20).map(lambda t: "/" + t),
)
QUERY = st.dictionaries(KEYS, st.text(max_size=10), max_size=3).map(
    lambda d: "&".join(f"{k}={v}" for k, v in d.items())
)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "", "//"]))
    query = draw(QUERY)
    return scheme + draw(HOSTS) + draw(PATHS) + (f"?{query}" if query else "")


def py_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


@st.composite
def formatted(draw: st.DrawFn) -> str:
    """One output in each format the parser reads."""
    name, args = draw(NAMES), draw(ARGS)
    kind = draw(st.integers(0, 12))
    if kind == 0:
        return f"<API>{name}({py_args(args)})</API>"
    if kind == 1:
        return f"API-Request: [{name}({py_args(args)})]"
    if kind == 2:
        return json.dumps({"name": name, "arguments": args})
    if kind == 3:
        return f"Action: {name}\nAction Input: {json.dumps(args)}"
    if kind == 4:
        call = {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        return json.dumps({"role": "assistant", "tool_calls": [call]})
    if kind == 5:
        payload = {"url": draw(urls()), "params": args, "data": draw(JSON)}
        return f"Operation: GET\nInput: {json.dumps(payload)}"
    if kind == 6:
        return f"{draw(st.sampled_from(['GET', 'POST', 'get']))} {draw(urls())}"
    if kind == 7:
        data = json.dumps(args)
        return f"curl -X POST {draw(urls())} -H 'Content-Type: application/json' -d '{data}'"
    if kind == 8:
        return f"Here you go:\n```python\n{name}({py_args(args)})\n```"
    if kind == 9:
        init = f'{{method: "POST", body: JSON.stringify({json.dumps(args)})}}'
        return f"const r = await fetch({json.dumps(draw(urls()))}, {init});"
    if kind == 10:
        return f"axios.get({json.dumps(draw(urls()))}, {{params: {json.dumps(args)}}})"
    if kind == 11:
        return f"wget -qO- --post-data '{json.dumps(args)}' {draw(urls())}"
    return f"{name}({py_args(args)})"


@st.composite
def edited(draw: st.DrawFn) -> str:
    """A formatted output with random edits: insertions, deletions, cuts."""
    text = draw(formatted())
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.integers(0, 2))
        if op == 0:
            text = text[:i] + draw(st.text(max_size=4)) + text[i:]
        elif op == 1:
            text = text[:i] + text[i + draw(st.integers(1, 5)) :]
        else:
            text = text[:i]
    return text
