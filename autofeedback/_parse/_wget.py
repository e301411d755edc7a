"""``wget`` commands (``wget -qO- --header='Accept: application/json' https://...``), read
from their words, never run: ``--method`` and ``--body-data``, ``--post-data`` (a POST
whose body is form text unless a header says otherwise), ``--header``, and the user and
password wget would send as Basic credentials."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from autofeedback._parse._common import (
    _HTTP_METHODS,
    _Candidate,
    _Problem,
    _Scan,
)
from autofeedback._parse._curl import detect_commands
from autofeedback._parse._http import _url_problem
from autofeedback._parse._httpie import _URLISH
from autofeedback.core._model import ApiRequest

_WGET = re.compile(r"(?<![\w./-])wget(?=[ \t])")
#: short options whose value follows (in the same word, ``-O-``, or the next one)
_SHORT_WITH_VALUE = frozenset("OoatTwPUeiBQlDARIXY")
#: long options whose value follows, when not written ``--name=value``
_LONG_WITH_VALUE = frozenset(
    {"--output-document", "--output-file", "--append-output", "--tries", "--timeout",
     "--wait", "--directory-prefix", "--user-agent", "--execute", "--input-file",
     "--base", "--quota", "--level", "--domains", "--accept", "--reject",
     "--include-directories", "--exclude-directories", "--load-cookies", "--save-cookies",
     "--post-file", "--body-file", "--dns-timeout", "--connect-timeout", "--read-timeout",
     "--limit-rate", "--referer", "--ca-certificate", "--certificate", "--private-key",
     "--proxy-user", "--proxy-password", "--header", "--method", "--body-data",
     "--post-data", "--user", "--password", "--http-user", "--http-password"}
)  # fmt: skip
_FORM = "application/x-www-form-urlencoded"


def _detect_wget(scan: _Scan) -> Iterator[_Candidate]:
    starts = (m.start() for m in _WGET.finditer(scan.text))
    return detect_commands(scan, starts, "a wget command", request_from_wget)


def _options(words: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The options of a wget command as ``(name, value)`` (``""`` for a flag), and the
    words that are not options (the URLs)."""
    options: list[tuple[str, str]] = []
    rest: list[str] = []
    tokens = iter(words)
    for tok in tokens:
        if tok.startswith("--") and len(tok) > 2:
            name, eq, value = tok.partition("=")
            if not eq and name in _LONG_WITH_VALUE:
                value = next(tokens, "")
            options.append((name, value))
        elif tok.startswith("-") and len(tok) > 1:
            # short flags run together (``-qO-``): the first that takes a value ends the run
            for i, letter in enumerate(tok[1:], 1):
                if letter in _SHORT_WITH_VALUE:
                    value = tok[i + 1 :] or next(tokens, "")
                    options.append((f"-{letter}", value))
                    break
                options.append((f"-{letter}", ""))
        else:
            rest.append(tok)
    return options, rest


def request_from_wget(command: str) -> ApiRequest | None:
    """The request a wget command sends; ``None`` where it names no URL (prose).

    >>> r = request_from_wget("wget -qO- --post-data 'q=dune&limit=5' https://x.io/search")
    >>> r.method, r.url, r.body
    ('POST', 'https://x.io/search', 'q=dune&limit=5')
    >>> dict(r.headers)
    {'Content-Type': 'application/x-www-form-urlencoded'}
    """
    cleaned = re.sub(r"\\[ \t]*\r?\n", " ", command).rstrip().rstrip("`")
    try:
        words = shlex.split(cleaned)
    except ValueError as exc:
        raise _Problem(f"the command does not split into words: {exc}") from None
    options, rest = _options(words[1:])
    if not rest or not _URLISH.match(rest[0]):
        if options:
            raise _Problem("there is no URL")
        return None  # prose that mentions wget ("use wget to download files")
    urls = [w for w in rest if _URLISH.match(w)]
    if len(urls) > 1:
        raise _Problem("it fetches more than one URL; write one command a request")
    url = urls[0] if "://" in urls[0] else f"http://{urls[0]}"  # wget's default scheme
    bad = _url_problem(url)
    if bad is not None:
        raise _Problem(bad)
    method: str | None = None
    body: str | None = None
    headers: dict[str, str] = {}
    user = password = None
    for name, value in options:
        if name == "--method":
            method = value.upper()
        elif name in ("--body-data", "--post-data"):
            body = value
            if name == "--post-data":
                method = method or "POST"
        elif name in ("--post-file", "--body-file"):
            raise _Problem(f"its body is read from a file ({name}), which is not read here")
        elif name == "--header":
            key, _, item = value.partition(":")
            headers[key.strip()] = item.strip()
        elif name in ("--user", "--http-user"):
            user = value
        elif name in ("--password", "--http-password"):
            password = value
    if user is not None or password is not None:
        # the credentials become the header wget sends, so they are masked like one
        pair = f"{user or ''}:{password or ''}".encode("utf-8", "surrogatepass")
        headers.setdefault("Authorization", f"Basic {base64.b64encode(pair).decode()}")
    if body is not None and method is None:
        raise _Problem("--body-data is sent only with --method")
    if body is not None and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = _FORM  # what wget sends with a body
    payload: Any = body
    if body is not None:
        with contextlib.suppress(ValueError, RecursionError):
            payload = json.loads(body)  # as curl's reader does: JSON text is its value
    method = method or "GET"
    if method not in _HTTP_METHODS:
        raise _Problem(f"unknown HTTP method {method!r}")
    return ApiRequest(method=method, url=url, headers=headers, body=payload, format="http")
