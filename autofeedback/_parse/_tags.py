"""The benchmark formats: the paper's ``<API>Name(k=v)</API>``, API-Bank's
``API-Request: [Name(k='v')]`` and RestGPT's ``Operation:`` / ``Input: {...}``."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from autofeedback._parse._common import (
    RequestFormatError,
    _at_line_start,
    _Candidate,
    _json_loads,
    _Problem,
    _Scan,
    _skip_space,
)
from autofeedback._parse._http import (
    _HTTP_REQUEST,
    _clean_url,
    _url_problem,
)
from autofeedback._parse._json import (
    _http_from_record,
    _requests_from_json,
)
from autofeedback._parse._python import (
    _ast_parse,
    _call_from_node,
    _call_from_source,
)
from autofeedback.core._model import ApiRequest

_API_OPEN = re.compile(r"<API>", re.IGNORECASE)
_API_CLOSE = re.compile(r"</API>", re.IGNORECASE)


def _detect_api_tag(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    opens = [m.span() for m in _API_OPEN.finditer(text)]
    for i, (start, content_start) in enumerate(opens):
        scan.tick("<API> tag")
        limit = opens[i + 1][0] if i + 1 < len(opens) else len(text)
        close = _API_CLOSE.search(text, content_start, limit)
        if close is not None:
            content, end = text[content_start : close.start()], close.end()
        else:
            eol = text.find("\n", content_start, limit)
            end = eol if eol != -1 else limit
            content = text[content_start:end]
        try:
            requests = _requests_from_tag(scan, content)
        except (_Problem, RequestFormatError) as exc:
            reason = exc.reason if isinstance(exc, _Problem) else str(exc)
            problem = f"looks like an <API> call but {reason}"
            yield _Candidate(start, end, "api-tag", problem=problem)
        else:
            yield _Candidate(start, end, "api-tag", requests=tuple(requests))


def _requests_from_tag(scan: _Scan, content: str) -> list[ApiRequest]:
    body = content.strip().strip("`").strip()
    if not body:
        raise _Problem("the tag is empty")
    if body[0] in "{[":
        try:
            value = _json_loads(body)
        except _Problem as exc:
            raise _Problem(f"the JSON inside does not parse: {exc.reason}") from None
        found = _requests_from_json(value)
        if not found:
            raise _Problem("the JSON inside is not a function call")
        return [replace(r, format="api-tag") for r in found]
    line = _HTTP_REQUEST.match(body)
    if line is not None:
        rest = body[line.end() :].strip()
        payload = None
        if rest[:1] in ("{", "["):
            try:
                payload = _json_loads(rest)
            except _Problem as exc:
                raise _Problem(f"the JSON body does not parse: {exc.reason}") from None
        url = _clean_url(line.group(2))
        bad_url = _url_problem(url)
        if bad_url is not None:
            raise _Problem(bad_url)
        return [ApiRequest(method=line.group(1), url=url, body=payload, format="api-tag")]
    name, args = _call_from_source(body, scan, lenient=True)
    return [ApiRequest(name=name, arguments=args, format="api-tag")]


_API_BANK = re.compile(r"API-Request[ \t]*:[ \t]*", re.IGNORECASE)
_NEXT_CALL = re.compile(r"\)\s*,\s*(?=[A-Za-z_][\w.]*\s*\()")


def _detect_api_bank(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    found = list(_API_BANK.finditer(text))
    for k, m in enumerate(found):
        scan.tick("API-Request")
        j = m.end()
        # One request per line, and never past the next "API-Request:" (linear scan).
        limit = found[k + 1].start() if k + 1 < len(found) else len(text)
        eol = text.find("\n", j, limit)
        line = text[j : eol if eol != -1 else limit].rstrip()
        try:
            if line.startswith("["):
                close = line.rfind("]")
                if close <= 0:
                    end = j + len(line)
                    raise _Problem("the '[' of the request list is never closed")
                inner, end = line[1:close], j + close + 1
            else:
                inner, end = line, j + len(line)
            calls = _api_bank_calls(inner, scan)
        except _Problem as exc:
            yield _Candidate(
                m.start(),
                end,
                "api-bank",
                problem=f"looks like an API-Bank request but {exc.reason}",
            )
        else:
            requests = tuple(
                ApiRequest(name=name, arguments=args, format="api-bank", raw=raw)
                for name, args, raw in calls
            )
            yield _Candidate(m.start(), end, "api-bank", requests=requests)


def _api_bank_calls(inner: str, scan: _Scan) -> list[tuple[str, dict[str, Any], str]]:
    if not inner.strip():
        raise _Problem("the request list is empty")
    src = f"[{inner}]"
    try:
        tree = _ast_parse(src, scan)
    except _Problem as exc:
        if not exc.syntax:
            raise
        tree = None
    if tree is not None and isinstance(tree.body, ast.List):
        out = []
        for index, elt in enumerate(tree.body.elts, 1):
            if not isinstance(elt, ast.Call):
                raise _Problem(f"item {index} of the request list is not a call Name(key=value)")
            name, args = _call_from_node(elt, src, lenient=True)
            out.append((name, args, ast.get_source_segment(src, elt) or ""))
        return out
    # API-Bank's own gold calls nest quotes (health_data='[{'name': ...}]'), which no
    # Python parser accepts: split the calls apart and read each one leniently.
    pieces: list[str] = []
    start = 0
    for boundary in _NEXT_CALL.finditer(inner):
        pieces.append(inner[start : boundary.start() + 1])
        start = boundary.end()
    pieces.append(inner[start:])
    calls = []
    for piece in pieces:
        name, args = _call_from_source(piece, scan, lenient=True)
        calls.append((name, args, piece.strip()))
    return calls


_RESTGPT_OP = re.compile(r"Operation[ \t]*:[ \t]*`?([A-Za-z]+)`?")
_RESTGPT_INPUT = re.compile(r"^[ \t]*Input[ \t]*:[ \t]*", re.MULTILINE)


def _detect_restgpt(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "Operation" not in text:
        return
    ops = [m for m in _RESTGPT_OP.finditer(text) if _at_line_start(text, m.start())]
    for i, m in enumerate(ops):
        scan.tick("RestGPT operation")
        limit = ops[i + 1].start() if i + 1 < len(ops) else len(text)
        method = m.group(1).upper()
        end = m.end()
        try:
            found = _RESTGPT_INPUT.search(text, m.end(), limit)
            if found is None:
                raise _Problem(f"no 'Input: {{...}}' follows 'Operation: {method}'")
            j = _skip_space(text, found.end())
            end = max(end, j)
            if text[j : j + 1] != "{":
                raise _Problem("the Input is not a JSON object")
            value, end = scan.decode(j)
            if not isinstance(value, Mapping):
                raise _Problem("the Input is not a JSON object")
            request = _http_from_record({**value, "method": method}, "restgpt")
        except (_Problem, RequestFormatError) as exc:
            reason = exc.reason if isinstance(exc, _Problem) else str(exc)
            yield _Candidate(
                m.start(), end, "restgpt", problem=f"looks like a RestGPT operation but {reason}"
            )
        else:
            yield _Candidate(m.start(), end, "restgpt", requests=(request,))
