"""HTTPie commands (``http POST example.org/orders item=book qty:=2 Accept:text/plain``),
read from their words, never run: ``==`` a query parameter, ``=`` a string field, ``:=`` a
JSON field, ``@`` a file field (its content is not known here), ``:`` a header."""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from autofeedback._parse._common import (
    _HTTP_METHODS,
    MULTIPART_BOUNDARY,
    _Candidate,
    _Problem,
    _Scan,
    multipart_body,
)
from autofeedback._parse._curl import detect_commands
from autofeedback._parse._http import _url_problem
from autofeedback.core._model import ApiRequest

# the command (``http``, ``https``, xh's ``xh``/``xhs``) at a word's start, then a flag,
# a method or a URL-ish word (``https://`` itself never matches: a space must follow)
_HTTPIE = re.compile(
    r"(?<![\w./:-])(?:https?|xhs?)[ \t]+(?=-|(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)[ \t]"
    r"|[A-Za-z0-9:/\[])"
)
#: flags followed by a value
_WITH_VALUE = frozenset(
    {"-a", "--auth", "-A", "--auth-type", "--print", "-p", "--pretty", "-s", "--style",
     "--timeout", "--verify", "--session", "--session-read-only", "-o", "--output",
     "--proxy", "--cert", "--cert-key", "--max-redirects", "--default-scheme"}
)  # fmt: skip
#: a word HTTPie reads as a URL: with a scheme, ``:3000/x``, ``localhost``, a host name
_URLISH = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://|:\d*/|:\d+$|localhost\b|[\w-]+(?:\.[\w-]+)+(?:[:/]|$)"
)
#: an item's separators, longest first where two start at one place
_SEPARATORS = (":=@", ":=", "==", "=@", "=", "@", ":")


def _detect_httpie(scan: _Scan) -> Iterator[_Candidate]:
    starts = (m.start() for m in _HTTPIE.finditer(scan.text))
    return detect_commands(scan, starts, "an HTTPie command", request_from_httpie)


def request_from_httpie(command: str) -> ApiRequest | None:
    """The request an HTTPie command sends; ``None`` where it names no URL.

    >>> r = request_from_httpie("http POST api.example.com/orders item=book qty:=2 X-Id:7")
    >>> r.method, r.url, r.body, dict(r.headers)
    ('POST', 'http://api.example.com/orders', {'item': 'book', 'qty': 2}, {'X-Id': '7'})
    """
    cleaned = re.sub(r"\\[ \t]*\r?\n", " ", command).rstrip().rstrip("`")
    try:
        words = shlex.split(cleaned)
    except ValueError as exc:
        raise _Problem(f"the command does not split into words: {exc}") from None
    scheme = "https://" if words[0] in ("https", "xhs") else "http://"
    form = False
    headers: dict[str, str] = {}
    rest: list[str] = []
    tokens = iter(words[1:])
    for tok in tokens:
        if tok in ("-f", "--form", "--multipart"):
            form = True
        elif tok in ("-a", "--auth"):
            token = base64.b64encode(next(tokens, "").encode("utf-8", "surrogatepass"))
            headers.setdefault("Authorization", f"Basic {token.decode()}")
        elif tok in _WITH_VALUE:
            next(tokens, None)
        elif tok.startswith("-") and len(tok) > 1 and not rest:
            continue  # a flag with no value (-v, --follow, --check-status...)
        else:
            rest.append(tok)
    method = rest.pop(0) if rest and rest[0] in _HTTP_METHODS else None
    if not rest or (method is None and not _URLISH.match(rest[0])):
        return None  # prose that says "http" ("the http protocol is stateless")
    url = _url(rest.pop(0), scheme)
    bad = _url_problem(url)
    if bad is not None:
        raise _Problem(bad)
    params: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    files: list[tuple[str, str]] = []
    for item in rest:
        key, sep, value = _split(item)
        if sep == "==":
            params[key] = value
        elif sep == ":=":
            try:
                fields[key] = json.loads(value)
            except (ValueError, RecursionError):
                raise _Problem(f"{key!r}:= is not followed by JSON: {value[:40]!r}") from None
        elif sep == "=":
            fields[key] = value
        elif sep in ("@", "=@", ":=@"):
            files.append((key, value.rsplit("/", 1)[-1]))  # read from a file not read here
        elif sep == ":":
            headers[key] = value
        else:
            raise _Problem(f"{item!r} is no request item (name=value, name:=json, Header:value)")
    body: Any = None
    if files or (form and fields):
        text = {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
        if files:
            parts = [(k, v, None) for k, v in text.items()]
            body = multipart_body([*parts, *((k, "", name) for k, name in files)])
            headers.setdefault(
                "Content-Type", f"multipart/form-data; boundary={MULTIPART_BOUNDARY}"
            )
        else:
            body = "&".join(f"{k}={v}" for k, v in text.items())
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif fields:
        body = fields
    method = method or ("POST" if body is not None else "GET")
    return ApiRequest(
        method=method,
        url=url,
        params=params,
        headers=headers,
        body=body,
        format="http",
        unread_files=tuple(dict.fromkeys(k for k, _ in files)),
    )


def _url(word: str, scheme: str) -> str:
    """HTTPie's URL shorthands: ``:3000/x`` and ``:/x`` are localhost, no scheme is ours;
    a path alone stays a path (a model writes ``http GET /books``)."""
    if word.startswith("/"):
        return word
    if word.startswith(":"):
        port, _, path = word[1:].partition("/")
        return f"http://localhost{':' + port if port else ''}/{path}"
    return word if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", word) else scheme + word


def _split(item: str) -> tuple[str, str, str]:
    """``(name, separator, value)`` of a request item, at its first separator."""
    for i in range(len(item)):
        for sep in _SEPARATORS:
            if item.startswith(sep, i) and i > 0:
                return item[:i], sep, item[i + len(sep) :]
    return item, "", ""
