"""HTTP calls in JavaScript an agent wrote, read from their literals, never run:
``fetch(url, {method, headers, body})`` and axios (``axios.get(url, {params})``,
``axios.post(url, data, {headers})``, ``axios({method, url, data})``).

Only literal values are read: strings (a template literal without ``${}``), numbers,
``true``/``false``/``null``, objects and arrays, ``JSON.stringify(...)`` of one, and
``new URLSearchParams(...)`` / ``new Headers(...)`` of one. Headers held in a variable are
left out (as for Python's clients); a URL, query or body made when the code runs cannot
be checked, and the candidate says so. Every scan is linear and nesting is bounded."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from autofeedback._parse._common import (
    RequestFormatError,
    _Candidate,
    _Problem,
    _Scan,
)
from autofeedback._parse._python import _ParenMatcher
from autofeedback.core._model import ApiRequest

_CALL = re.compile(
    r"(?<![\w$.])(?:(?:window|globalThis)\.)?(fetch|axios(?:\.(get|post|put|patch|delete|head"
    r"|options|request))?)[ \t]*\("
)
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9_]*)(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?")
#: a URL made at run time: a name or member (``url``, ``this.cfg.url``), a template, a
#: concatenation or a call (``base + "/x"``, ``new URL(...)``); not ``url="..."``, not prose
_EXPRESSION = re.compile(
    r"(?:new\s+)?[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*(?:\s*(?:[+(\[]).*)?|`.*",
    re.DOTALL,
)
_MAX_DEPTH = 64
#: axios' methods whose second argument is the body
_WITH_DATA = frozenset({"post", "put", "patch"})
_FORM = "application/x-www-form-urlencoded;charset=UTF-8"


class _Computed:
    """A value made when the code runs (a variable, a call, a template with ``${}``)."""

    def __init__(self, text: str) -> None:
        self.text = text


class _Stringified:
    """``JSON.stringify(value)``: JSON text of a literal value."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _Form:
    """``new URLSearchParams(...)``: form text."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _Reader:
    """A JavaScript expression reader over ``text`` from ``pos``: literals become Python
    values, anything else a :class:`_Computed` that spans it."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                eol = text.find("\n", self.pos)
                self.pos = n if eol == -1 else eol + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end == -1:
                    raise _Problem("a comment is never closed")
                self.pos = end + 2
            else:
                return

    def peek(self) -> str:
        self.space()
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            got = self.text[self.pos : self.pos + 20] or "the end"
            raise _Problem(f"expected {char!r} at {got!r}", syntax=True)
        self.pos += 1

    def value(self, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise _Problem("its arguments are nested too deeply")
        c = self.peek()
        start = self.pos
        if c in "\"'`":
            try:
                text = self.string(c)
            except _TemplateComputed:
                return self.computed(start, depth)
            return text if self._ends_here() else self.computed(start, depth)
        if c == "{":
            return self.object(depth)
        if c == "[":
            return self.array(depth)
        number = _NUMBER.match(self.text, self.pos)
        if number is not None and self._ends_at(number.end()):
            self.pos = number.end()
            literal = number.group().replace("_", "")
            return float(literal) if any(x in literal for x in ".eE") else int(literal)
        word = _IDENT.match(self.text, self.pos)
        if word is not None:
            name = word.group()
            if name in ("true", "false", "null", "undefined") and self._ends_at(word.end()):
                self.pos = word.end()
                return {"true": True, "false": False}.get(name)
            for wrapper, kind in _WRAPPERS:
                if self._at_call(wrapper):
                    inner = self.value(depth + 1)
                    if self.peek() == ",":  # JSON.stringify(v, null, 2): layout only
                        self.computed(self.pos, depth)
                    self.expect(")")
                    if isinstance(inner, _Computed) or not self._ends_here():
                        return self.computed(start, depth)
                    return inner if kind is dict else kind(inner)
        return self.computed(start, depth)

    def _at_call(self, wrapper: re.Pattern[str]) -> bool:
        m = wrapper.match(self.text, self.pos)
        if m is None:
            return False
        self.pos = m.end()
        return True

    def _ends_at(self, end: int) -> bool:
        rest = self.text[end : end + 1]
        return rest == "" or rest in " \t\r\n,)}]/"

    def _ends_here(self) -> bool:
        return self.peek() in ("", ",", ")", "}", "]")

    def computed(self, start: int, depth: int) -> _Computed:
        """Skip to the end of the expression at ``start`` (a top-level ``,`` or a closing
        bracket), across strings and brackets."""
        text, n = self.text, len(self.text)
        self.pos = start
        level = 0
        while self.pos < n:
            c = text[self.pos]
            if c in "\"'`":
                self.string(c, computed_ok=True)
                continue
            if c in "([{":
                level += 1
            elif c in ")]}":
                if level == 0:
                    break
                level -= 1
            elif c == "," and level == 0:
                break
            self.pos += 1
        return _Computed(text[start : self.pos].strip())

    def string(self, quote: str, computed_ok: bool = False) -> str:
        text = self.text
        i = self.pos + 1
        out: list[str] = []
        while True:
            j = i
            while j < len(text) and text[j] not in (quote, "\\", "$", "\n"):
                j += 1
            out.append(text[i:j])
            if j >= len(text) or (text[j] == "\n" and quote != "`"):
                raise _Problem("a string is never closed", syntax=True)
            c = text[j]
            if c == quote:
                self.pos = j + 1
                return "".join(out)
            if c == "\\":
                out.append(_ESCAPES.get(text[j + 1 : j + 2], text[j + 1 : j + 2]))
                i = j + 2
            elif c == "$" and quote == "`" and text[j + 1 : j + 2] == "{":
                if not computed_ok:
                    # a template that runs code: the whole literal is computed
                    self.pos = j
                    self._skip_template()
                    raise _TemplateComputed()
                i = j + 1
            else:
                out.append(c)
                i = j + 1

    def _skip_template(self) -> None:
        end = self.text.find("`", self.pos)
        self.pos = len(self.text) if end == -1 else end + 1

    def object(self, depth: int) -> Any:
        self.expect("{")
        out: dict[str, Any] = {}
        while self.peek() != "}":
            if self.text.startswith("...", self.pos):
                self.pos += 3
                self.value(depth + 1)
                out["..."] = _Computed("...")
            else:
                c = self.peek()
                if c in "\"'":
                    key = self.string(c)
                elif c == "[":
                    raise _Problem("a computed key cannot be read")
                else:
                    word = _IDENT.match(self.text, self.pos) or _NUMBER.match(self.text, self.pos)
                    if word is None:
                        got = self.text[self.pos : self.pos + 20]
                        raise _Problem(f"an object key is expected at {got!r}", syntax=True)
                    key = word.group()
                    self.pos = word.end()
                if self.peek() in (",", "}"):  # shorthand ``{limit}``: a variable
                    out[key] = _Computed(key)
                else:
                    self.expect(":")
                    out[key] = self.value(depth + 1)
            if self.peek() != ",":
                break
            self.pos += 1
        self.expect("}")
        return out

    def array(self, depth: int) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        while self.peek() != "]":
            out.append(self.value(depth + 1))
            if self.peek() != ",":
                break
            self.pos += 1
        self.expect("]")
        return out


class _TemplateComputed(Exception):
    """A template literal with ``${}``: read on as a computed value."""


_WRAPPERS: tuple[tuple[re.Pattern[str], type], ...] = (
    (re.compile(r"JSON\s*\.\s*stringify\s*\("), _Stringified),
    (re.compile(r"new\s+URLSearchParams\s*\("), _Form),
    (re.compile(r"new\s+Headers\s*\("), dict),
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}


def _arguments(text: str, open_paren: int) -> list[Any]:
    """The arguments of the call whose ``(`` is at ``open_paren`` and whose ``)`` ends
    ``text``."""
    reader = _Reader(text, open_paren + 1)
    args: list[Any] = []
    while reader.peek() != ")":
        args.append(reader.value())
        if reader.peek() != ",":
            break
        reader.pos += 1
    reader.expect(")")
    if reader.pos != len(text):
        raise _Problem("its parentheses do not close where they should", syntax=True)
    return args


_CHAINED = re.compile(r"\s*\.\s*[A-Za-z_$][\w$]*\s*\(")


def _chain_end(text: str, end: int, matcher: _ParenMatcher) -> int:
    """The end of the calls chained on the call that ends at ``end`` (``.then(r =>
    r.json())``, ``.catch(...)``): part of the statement, never calls of their own."""
    while (m := _CHAINED.match(text, end)) is not None:
        close = matcher.match(m.end() - 1)
        if close is None:
            break
        end = close + 1
    return end


def _detect_javascript(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "fetch" not in text and "axios" not in text:
        return
    # each call is read between its parentheses, found in one pass over the text (a
    # call inside another's parentheses is not read again): linear in the text
    matcher = _ParenMatcher(text)
    skip_until = 0
    for m in _CALL.finditer(text):
        if m.start() < skip_until or scan.claimed_end(m.start()) is not None:
            continue
        scan.tick("JavaScript call")
        close = matcher.match(m.end() - 1)
        if close is None:
            continue  # never closed, or longer than a call may be: the Python reader says so
        skip_until = close + 1
        try:
            args = _arguments(text[m.start() : close + 1], m.end() - 1 - m.start())
        except _Problem as exc:
            if exc.syntax:
                continue  # not JavaScript after all
            yield _Candidate(m.start(), close + 1, "http", claims=False, problem=_say(m, exc))
            continue
        end = _chain_end(text, close + 1, matcher)
        try:
            request = _request(m.group(1), m.group(2), args)
        except (_Problem, RequestFormatError) as exc:
            yield _Candidate(m.start(), end, "http", problem=_say(m, exc))
        else:
            if request is not None:
                yield _Candidate(m.start(), end, "http", requests=(request,))


def _say(m: re.Match[str], exc: Exception) -> str:
    reason = exc.reason if isinstance(exc, _Problem) else str(exc)
    return f"looks like a JavaScript {m.group(1)}() call but {reason}"


def _request(name: str, method: str | None, args: list[Any]) -> ApiRequest | None:
    """The record of a ``fetch``/axios call from its arguments (``None``: not one)."""
    if not args:
        return None
    if name == "fetch":
        if not isinstance(args[0], (str, _Computed)) or len(args) > 2:
            return None  # ``fetch({...})``: another tool's
        if isinstance(args[0], _Computed) and _EXPRESSION.fullmatch(args[0].text) is None:
            return None  # ``fetch(url="...")`` (Python), ``fetch (the data)`` (prose)
        init = args[1] if len(args) > 1 else {}
        if not isinstance(init, dict):
            raise _Problem("its options are made when the code runs")
        record = {"url": args[0], "method": init.get("method", "GET")}
        _headers(record, init.get("headers"))
        _body(record, init.get("body"), "body")
        return _built(record)
    if method in (None, "request"):
        config = args[0] if isinstance(args[0], dict) else (args[1] if len(args) > 1 else {})
        if not isinstance(config, dict):
            raise _Problem("its config is made when the code runs")
        url = args[0] if not isinstance(args[0], dict) else config.get("url")
        record = {"url": url, "method": config.get("method", "get")}
        data = config.get("data")
    else:
        with_data = method in _WITH_DATA
        data = args[1] if with_data and len(args) > 1 else None
        config = args[2 if with_data else 1] if len(args) > (2 if with_data else 1) else {}
        if not isinstance(config, dict):
            raise _Problem("its config is made when the code runs")
        record = {"url": args[0], "method": method}
    base = config.get("baseURL")
    if isinstance(base, str) and isinstance(record["url"], str) and "://" not in record["url"]:
        record["url"] = base.rstrip("/") + "/" + record["url"].lstrip("/")
    params = config.get("params")
    if isinstance(params, _Form):
        params = params.value
    if params is not None:
        if isinstance(params, _Computed) or not isinstance(params, dict):
            raise _Problem("its params are made when the code runs")
        record["params"] = _plain(params, "params")
    _headers(record, config.get("headers"))
    _body(record, data, "data")
    return _built(record)


def _headers(record: dict[str, Any], headers: Any) -> None:
    if isinstance(headers, dict):
        # a header held in a variable is not known here, and not the call's arguments
        record["headers"] = {
            str(k): str(v) for k, v in headers.items() if not isinstance(v, _Computed)
        }


def _body(record: dict[str, Any], body: Any, name: str) -> None:
    if body is None:
        return
    method = record.get("method")
    if name == "body" and isinstance(method, str) and method.upper() in ("GET", "HEAD"):
        raise _Problem("a GET or HEAD request cannot have a body (fetch throws a TypeError)")
    if isinstance(body, _Computed):
        raise _Problem(f"its {name} is made when the code runs ({body.text[:40]!r})")
    if isinstance(body, _Stringified):
        record["json"] = _plain(body.value, name)
    elif isinstance(body, _Form):
        form = body.value
        record["body"] = form if isinstance(form, str) else urlencode(_plain(form, name))
        headers = record.setdefault("headers", {})
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = _FORM  # what the browser and axios send with one
    elif isinstance(body, str):
        try:
            record["json"] = json.loads(body)  # JSON text is its value, as curl's -d
        except (ValueError, RecursionError):
            record["body"] = body
    elif name == "data":
        record["json"] = _plain(body, name)  # axios sends an object as JSON
    else:
        raise _Problem("its body is an object: fetch sends it as '[object Object]'")


def _plain(value: Any, name: str) -> Any:
    """``value`` with no computed part, or a problem naming where one is."""
    if isinstance(value, _Computed):
        raise _Problem(f"a value of its {name} is made when the code runs ({value.text[:40]!r})")
    if isinstance(value, (_Stringified, _Form)):
        return _plain(value.value, name)
    if isinstance(value, dict):
        return {k: _plain(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, name) for v in value]
    return value


def _built(record: dict[str, Any]) -> ApiRequest:
    url, method = record["url"], record["method"]
    if isinstance(url, _Computed) or not isinstance(url, str):
        raise _Problem("its URL is made when the code runs (a variable or a template)")
    if isinstance(method, _Computed) or not isinstance(method, str):
        raise _Problem("its method is made when the code runs")
    from autofeedback._parse._json import _http_from_record

    return _http_from_record(record, "http")
