"""HTTP request lines (``GET /movie/550?language=en``), with headers and a JSON body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from autofeedback._parse._common import (
    _LINE_SPACE,
    _Candidate,
    _glued,
    _Problem,
    _Scan,
)
from autofeedback.core._model import ApiRequest

# ------------------------------------------------------------------- HTTP helpers

_HTTP_REQUEST = re.compile(
    r"(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)[ \t]+`?"
    r"(https?://[^\s`'\"<>]+|/[^\s`'\"<>]*)"
)
_HTTP_VERSION = re.compile(r"[ \t]+HTTP/\d(?:\.\d)?")
_HEADER_LINE = re.compile(r"[ \t]*([A-Za-z][A-Za-z0-9-]*)[ \t]*:[ \t]*([^\r\n]*)(?:\r?\n|\Z)")
_PLAIN_HEADERS = frozenset(
    {
        "host",
        "authorization",
        "accept",
        "cookie",
        "origin",
        "referer",
        "range",
        "connection",
        "expect",
        "from",
        "pragma",
        "forwarded",
        "dnt",
        "upgrade",
    }
)
_BODY_LEAD = re.compile(
    r"[ \t]*(?:(?:with[ \t]+)?(?:the[ \t]+)?(?:(?:json|request)[ \t]+)?"
    r"(?:body|payload|data)[ \t]*:?[ \t]*)?(?:\r?\n[ \t]*){0,3}",
    re.IGNORECASE,
)


def _url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a request target (``http://1[27.0.0.1/`` is no URL), or None.

    Checked here, at the source, so no later stage meets a URL that ``urlsplit`` rejects.
    """
    try:
        urlsplit(url)  # the port is not checked: ``{port}`` placeholders are common
    except ValueError as exc:
        return f"the URL {url[:80]!r} is not valid: {exc}"
    return None


def _clean_url(url: str) -> str:
    """Drop sentence punctuation glued to a URL in prose (``GET /movie/550.``)."""
    while url and url[-1] in ".,;:!?)]":
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        if url[-1] == "]" and url.count("[") >= url.count("]"):
            break
        url = url[:-1]
    return url


def _http_from_line(line: str) -> ApiRequest | None:
    m = _HTTP_REQUEST.match(line.strip())
    if m is None:
        return None
    url = _clean_url(m.group(2))
    if _url_problem(url) is not None:
        return None
    return ApiRequest(method=m.group(1), url=url, format="http", raw=line)


def _read_headers(text: str, pos: int) -> tuple[dict[str, str], int]:
    """Header lines right after a request line (an HTTP message written out)."""
    blank = _LINE_SPACE.match(text, pos).end()  # type: ignore[union-attr]
    if text[blank : blank + 1] == "\r":
        blank += 1
    if text[blank : blank + 1] != "\n":
        return {}, pos
    headers: dict[str, str] = {}
    j = blank + 1
    while len(headers) < 100 and (h := _HEADER_LINE.match(text, j)) is not None:
        name = h.group(1)
        if "-" not in name and name.lower() not in _PLAIN_HEADERS:
            break
        headers[name] = h.group(2).strip()
        j = h.end()
    return headers, (j if headers else pos)


def _detect_http(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    for m in _HTTP_REQUEST.finditer(text):
        if _glued(text, m.start(), "_/.-"):
            continue
        scan.tick("HTTP request line")
        method = m.group(1)
        url = _clean_url(m.group(2))
        end = m.start(2) + len(url)
        bad_url = _url_problem(url)
        if bad_url is not None:
            problem = f"looks like an HTTP request but {bad_url}"
            yield _Candidate(m.start(), end, "http", problem=problem)
            continue
        version = _HTTP_VERSION.match(text, end)
        if version is not None:
            end = version.end()
        headers, after = _read_headers(text, end)
        body: Any = None
        if method not in ("GET", "HEAD"):
            lead = _BODY_LEAD.match(text, after)
            j = lead.end() if lead is not None else after
            if text[j : j + 1] in ("{", "["):
                try:
                    body, end = scan.decode(j)
                except _Problem as exc:
                    yield _Candidate(
                        m.start(),
                        j,
                        "http",
                        problem=f"looks like an HTTP request but the body after "
                        f"'{method} {url}': {exc.reason}",
                    )
                    continue
            elif headers:
                end = after
        elif headers:
            end = after
        request = ApiRequest(method=method, url=url, headers=headers, body=body, format="http")
        yield _Candidate(m.start(), end, "http", requests=(request,))
