"""``curl`` commands, split with :mod:`shlex` (backslash continuations followed)."""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import parse_qsl

from autofeedback._parse._common import (
    _HTTP_METHODS,
    _MAX_CURL_CHARS,
    MULTIPART_BOUNDARY,
    RequestFormatError,
    _Candidate,
    _glued,
    _Problem,
    _Scan,
    multipart_body,
)
from autofeedback._parse._http import _url_problem
from autofeedback.core._model import ApiRequest

_CURL = re.compile(r"curl(?=[ \t])")
_CURL_WITH_VALUE = frozenset(
    {
        "-u",
        "--user",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-o",
        "--output",
        "-m",
        "--max-time",
        "--connect-timeout",
        "-x",
        "--proxy",
        "-w",
        "--write-out",
        "--retry",
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "--cacert",
        "--cert",
        "--key",
        "-r",
        "--range",
        "-E",
    }
)
_CURL_DATA = frozenset(
    {"-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--data-urlencode", "--json"}
)


def _detect_curl(scan: _Scan) -> Iterator[_Candidate]:
    starts = (
        m.start() for m in _CURL.finditer(scan.text) if not _glued(scan.text, m.start(), "_.-")
    )
    return detect_commands(scan, starts, "a curl command", _request_from_curl)


def detect_commands(
    scan: _Scan, starts: Iterable[int], what: str, read: Callable[[str], ApiRequest | None]
) -> Iterator[_Candidate]:
    """The candidates of the shell commands starting at ``starts`` (``what``: "a curl
    command"), each read by ``read`` up to its end (:func:`_command_end`); a command
    ``read`` finds no URL in is prose, and one it cannot read is a problem."""
    text = scan.text
    for start in starts:
        scan.tick(what.split(" ", 1)[1])
        end = _command_end(text, start)
        try:
            if end - start > _MAX_CURL_CHARS:
                raise _Problem(f"the command is longer than {_MAX_CURL_CHARS} characters")
            request = read(text[start:end])
        except (_Problem, RequestFormatError) as exc:
            reason = exc.reason if isinstance(exc, _Problem) else str(exc)
            yield _Candidate(start, end, "http", problem=f"looks like {what} but {reason}")
        else:
            if request is not None:
                yield _Candidate(start, end, "http", requests=(request,))


def _command_end(text: str, pos: int) -> int:
    """End of a shell command, following backslash line continuations; a command in an
    inline code span (``Run `curl https://x.io/a` to see it``) ends with the span."""
    if pos > 0 and text[pos - 1] == "`":
        close, eol = text.find("`", pos), text.find("\n", pos)
        if close != -1 and (eol == -1 or close < eol):
            return close
    while True:
        eol = text.find("\n", pos)
        if eol == -1:
            return len(text)
        if not text[pos:eol].rstrip().endswith("\\"):
            return eol
        pos = eol + 1


def _request_from_curl(command: str) -> ApiRequest | None:
    cleaned = re.sub(r"\\[ \t]*\r?\n", " ", command).rstrip().rstrip("`")
    try:
        tokens = shlex.split(cleaned)
    except ValueError as exc:
        raise _Problem(f"the command does not split into words: {exc}") from None
    method: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    data: list[str] = []
    form: list[tuple[str, bool]] = []
    get = False
    options = False
    words = iter(tokens[1:])
    for tok in words:
        if tok.startswith("-"):
            options = True
        if tok in ("-X", "--request"):
            method = next(words, None)
        elif tok.startswith("-X") and len(tok) > 2:
            method = tok[2:]
        elif tok in ("-H", "--header"):
            name, _, value = next(words, "").partition(":")
            headers[name.strip()] = value.strip()
        elif tok in ("-F", "--form", "--form-string"):
            form.append((next(words, ""), tok == "--form-string"))
        elif tok in _CURL_DATA:
            data.append(next(words, ""))
            if tok == "--json":
                headers.setdefault("Content-Type", "application/json")
        elif tok in ("-u", "--user"):
            # credentials become the header curl sends, so they are masked like one
            user = next(words, "")
            token = base64.b64encode(user.encode("utf-8", "surrogatepass")).decode()
            headers.setdefault("Authorization", f"Basic {token}")
        elif tok == "--oauth2-bearer":
            headers.setdefault("Authorization", f"Bearer {next(words, '')}")
        elif tok in ("-b", "--cookie"):
            cookie = next(words, "")
            if "=" in cookie:  # else it names a cookie file
                headers.setdefault("Cookie", cookie)
        elif tok in ("-G", "--get"):
            get = True
        elif tok == "--url":
            url = next(words, None)
        elif tok in _CURL_WITH_VALUE:
            next(words, None)
        elif not tok.startswith("-") and url is None:
            url = tok
    looks_like_url = url is not None and ("/" in url or "." in url or ":" in url)
    if not looks_like_url:
        if options:
            raise _Problem("there is no URL")
        return None  # prose that mentions curl
    assert url is not None
    bad_url = _url_problem(url)
    if bad_url is not None:
        raise _Problem(bad_url)
    payload = "&".join(data)
    params: dict[str, str] = {}
    body: Any = None
    unread: tuple[str, ...] = ()
    if get:
        params = dict(parse_qsl(payload, keep_blank_values=True))
        method = method or "GET"
    elif data:
        try:
            body = json.loads(payload)
        except (ValueError, RecursionError):
            body = payload  # form data stays text
    elif form:
        parts, unread = _form_parts(form)
        body = multipart_body(parts)
        # curl names its boundary, also in a multipart Content-Type written without one
        key = next((k for k in headers if k.lower() == "content-type"), "Content-Type")
        given = headers.get(key, "multipart/form-data")
        if given.lower().startswith("multipart/form-data") and "boundary=" not in given:
            headers[key] = f"{given}; boundary={MULTIPART_BOUNDARY}"
    method = (method or ("POST" if data or form else "GET")).upper()
    if method not in _HTTP_METHODS:
        raise _Problem(f"unknown HTTP method {method!r}")
    return ApiRequest(
        method=method,
        url=url,
        params=params,
        headers=headers,
        body=body,
        format="http",
        unread_files=unread,
    )


def _form_parts(
    fields: list[tuple[str, bool]],
) -> tuple[list[tuple[str, str, str | None]], tuple[str, ...]]:
    """The parts curl sends for its ``-F name=value`` fields (``--form-string``: the
    value as written), and the names of those whose content is a file curl would read
    (``name=@path``, ``name=<path``): not known here, so empty, with the file's name for
    ``@``.

    >>> _form_parts([("n=5", False), ("f=@docs/a.txt;type=text/plain", False), ("x", False)])
    ([('n', '5', None), ('f', '', 'a.txt')], ('f',))
    """
    parts: list[tuple[str, str, str | None]] = []
    unread: list[str] = []
    for field, literal in fields:
        name, eq, value = field.partition("=")
        if not eq or not name:
            continue
        if not literal and value[:1] in ("@", "<"):
            path = value[1:].split(";", 1)[0]
            parts.append((name, "", path.rsplit("/", 1)[-1] if value[0] == "@" else None))
            unread.append(name)
        else:
            parts.append((name, value, None))
    return parts, tuple(dict.fromkeys(unread))
