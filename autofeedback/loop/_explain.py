"""The dynamic analysis' explanation step: turn a server error into a documentation query
and retrieve what the docs say about it (the paper's Figure 6).

Servers often answer with terse bodies (``{"info_code": 20000}``); the query is the status
with its reason phrase plus the code and message fields found in the body, and the search
is restricted to the called operation's docs plus the API-independent ones.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from doc_index import DocIndex, Hit

__all__ = ["Explanation", "explain_response"]

#: Bodies are read up to this many bytes: an error explanation sits at the top, and a
#: server that answers with megabytes must not cost megabytes of parsing.
MAX_BODY_BYTES = 64 * 1024
#: A non-JSON body contributes at most this many characters to the query.
MAX_EXCERPT_CHARS = 300

# Field names that carry an error's code or message, in the order they are reported.
_FIELDS = (
    "code",
    "error_code",
    "errorcode",
    "info_code",
    "status_code",
    "status",
    "error",
    "type",
    "title",
    "reason",
    "message",
    "msg",
    "status_message",
    "error_message",
    "error_description",
    "detail",
    "details",
    "description",
    "info",
    "errors",
)
_FIELD_SET = frozenset(_FIELDS)
_MAX_DEPTH = 4
_MAX_PARTS = 12

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Explanation:
    """What the documentation says about one server error.

    ``query`` is what was searched, ``hits`` what was found (best first) and ``text`` the
    hits' chunks joined, one per line, ready to put into feedback (empty when nothing
    was found).
    """

    query: str
    hits: tuple[Hit, ...]
    text: str


def explain_response(
    index: DocIndex,
    operation: str | None,
    status: int,
    body: str | bytes | None,
    *,
    k: int = 3,
) -> Explanation:
    """Retrieve the documentation that explains a ``status`` response with ``body`` from
    ``operation`` (``None``, or an operation the index does not know: search all docs).

    >>> e = explain_response(index, "get_history", 400, b'{"info_code": 20000}')  # doctest: +SKIP
    >>> e.query                                                                     # doctest: +SKIP
    '400 Bad Request info_code 20000'
    >>> e.text                                                                      # doctest: +SKIP
    '400: info_code 20000: the parameter `date` must be YYYY-MM-DD.'
    """
    query = error_query(status, body)
    api = operation if operation is not None and operation in index.apis else None
    hits = tuple(index.search(query, api=api, k=k))
    return Explanation(query, hits, "\n".join(hit.chunk.text for hit in hits))


def error_query(status: int, body: str | bytes | None) -> str:
    """The search query for a server error: status, reason phrase and the body's
    code/message fields (or a short excerpt of a non-JSON body).

    >>> error_query(429, '{"error": {"status": 429, "message": "API rate limit exceeded"}}')
    '429 Too Many Requests error status 429 error message API rate limit exceeded'
    """
    parts = [str(status)]
    # a non-standard status (e.g. 499) has no phrase; the number is enough
    with contextlib.suppress(ValueError):
        parts.append(HTTPStatus(status).phrase)
    text = _body_text(body)
    if text:
        fields = _json_fields(text)
        parts.append(" ".join(fields) if fields is not None else _excerpt(text))
    return " ".join(p for p in parts if p)


def _body_text(body: str | bytes | None) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body[:MAX_BODY_BYTES]).decode("utf-8", errors="replace")
    return str(body)[:MAX_BODY_BYTES]


def _json_fields(text: str) -> list[str] | None:
    """``"key value"`` for every code/message field of a JSON body, or ``None`` when the
    body is not a JSON object or array (a cut-off body is not JSON either)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict | list):
        return [_scalar(doc)] if doc is not None else []
    found = list(_walk(doc, "", 0))
    if not found:
        # a JSON error with unconventional field names: its scalars are all there is
        found = [f"{key} {value}".strip() for key, value in _scalars(doc, "", 0)]
    return found[:_MAX_PARTS]


def _walk(node: Any, prefix: str, depth: int) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list):
        for item in node[:3]:
            yield from _walk(item, prefix, depth + 1)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        name = str(key)
        label = f"{prefix} {name}".strip()
        if name.lower() in _FIELD_SET and _is_scalar(value):
            yield f"{label} {_scalar(value)}"
        elif isinstance(value, dict | list):
            yield from _walk(value, label if name.lower() in _FIELD_SET else prefix, depth + 1)


def _scalars(node: Any, prefix: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _scalars(value, str(key), depth + 1)
    elif isinstance(node, list):
        for item in node[:3]:
            yield from _scalars(item, prefix, depth + 1)
    elif node is not None:
        yield prefix, _scalar(node)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else json.dumps(value)
    return _SPACE.sub(" ", text).strip()[:MAX_EXCERPT_CHARS]


def _excerpt(text: str) -> str:
    plain = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    if len(plain) <= MAX_EXCERPT_CHARS:
        return plain
    return plain[:MAX_EXCERPT_CHARS].rsplit(" ", 1)[0]
