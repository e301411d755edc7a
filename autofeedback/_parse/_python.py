"""Python-style calls ``Name(key=value)``, read with :func:`ast.parse` and never evaluated.

The strict reader takes literal values only; the lenient one (for ``<API>`` tags and
API-Bank) also takes bare words and the mis-nested quotes of API-Bank's gold calls.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from autofeedback._parse._common import (
    _MAX_CALL_SPAN,
    MULTIPART_BOUNDARY,
    RequestFormatError,
    _Candidate,
    _NotLiteral,
    _Problem,
    _Scan,
    multipart_body,
)
from autofeedback.core._model import ApiRequest

# ------------------------------------------------------------ Python-style arguments

_JSON_NAMES: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "true": True,
    "false": False,
    "null": None,
}
# Bare expressions a lenient format keeps as their source text (``date=2023-3-26``).
_SIMPLE_NODES = (
    ast.Name,
    ast.Attribute,
    ast.BinOp,
    ast.UnaryOp,
    ast.Constant,
    ast.Load,
    ast.operator,
    ast.unaryop,
)
_DETECTED_AT = re.compile(r"\s*\(detected at line \d+\)")


def _ast_parse(src: str, scan: _Scan) -> ast.Expression:
    """Parse one Python expression; every failure becomes a one-line :class:`_Problem`."""
    scan.charge(src)
    try:
        return ast.parse(src, mode="eval")
    except SyntaxError as exc:
        msg = _DETECTED_AT.sub("", exc.msg or "invalid syntax")
        if "\x00" in src and "null" in msg:
            msg = "it contains a NUL byte"
            raise _Problem(f"the arguments do not parse: {msg}", syntax=True) from None
        where = (
            f"column {exc.offset}"
            if (exc.lineno or 1) == 1
            else (f"line {exc.lineno} column {exc.offset}")
        )
        raise _Problem(f"the arguments do not parse: {msg} at {where}", syntax=True) from None
    except UnicodeError:
        reason = "the arguments do not parse: they hold text that is not valid Unicode"
        raise _Problem(reason, syntax=True) from None
    except ValueError as exc:
        msg = "it contains a NUL byte" if "\x00" in src else str(exc)
        raise _Problem(f"the arguments do not parse: {msg}", syntax=True) from None
    except (RecursionError, MemoryError):
        raise _Problem("the arguments are nested too deeply", syntax=True) from None


def _convert(node: ast.AST, lenient: bool) -> Any:
    """The value of a literal node; tuples and sets become lists."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, str | bool | int | float):
            return value
        raise _NotLiteral
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_convert(e, lenient) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:  # {**spread}
                raise _NotLiteral
            key = _convert(k, lenient)
            if not isinstance(key, str):
                # JSON objects only have string keys; spell the key as JSON would.
                key = json.dumps(key) if key is None or isinstance(key, bool) else str(key)
            out[key] = _convert(v, lenient)
        return out
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        number: int | float = node.operand.value  # type: ignore[assignment]
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.Name):
        if node.id in _JSON_NAMES:
            return _JSON_NAMES[node.id]
        if lenient:
            return node.id
    raise _NotLiteral


def _is_simple(node: ast.AST) -> bool:
    # ast.walk is iterative, so a 100k-long chain of "-" cannot overflow the stack.
    return all(isinstance(n, _SIMPLE_NODES) for n in ast.walk(node))


def _literal(node: ast.expr, src: str, key: str, lenient: bool) -> tuple[Any, bool]:
    """``(value, bare)``: ``bare`` when a lenient format took unquoted text as a string."""
    try:
        value = _convert(node, lenient)
    except _NotLiteral:
        if lenient and _is_simple(node):
            segment = ast.get_source_segment(src, node)
            if segment is not None:
                return segment.strip(), True
        raise _Problem(f"argument {key!r} is an expression, not a literal value") from None
    return value, isinstance(node, ast.Name) and node.id not in _JSON_NAMES


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _call_from_node(node: ast.expr, src: str, lenient: bool) -> tuple[str, dict[str, Any]]:
    if not isinstance(node, ast.Call):
        raise _Problem("it is not a call of the form Name(key=value, ...)")
    name = _dotted(node.func)
    if name is None:
        raise _Problem("the called thing is not a plain function name")
    if node.args:
        raise _Problem("positional argument 1 has no parameter name")
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise _Problem("'**' unpacking is not a parameter; write key=value")
        if kw.arg in args:
            raise _Problem(f"argument {kw.arg!r} is given twice")
        args[kw.arg], _ = _literal(kw.value, src, kw.arg, lenient)
    return name, args


# Identifiers as Python spells them: a letter or "_" (any script), then word characters;
# inner hyphens too, as tool names have them (`get-weather`: OpenAI, MCP and most
# providers allow them, and a model writes the name it was given)
_CALL_HEAD = re.compile(r"([^\W\d]\w*(?:-\w+)*(?:\.[^\W\d]\w*(?:-\w+)*)*)[ \t]*(\()?")
# Lenient formats also take the hyphens real operation names have (``preferred-routes_get``).
_LENIENT_HEAD = re.compile(r"([^\W\d][\w-]*(?:\.[^\W\d][\w-]*)*)[ \t]*(\()?")
_PLACEHOLDER = "_autofeedback_name_"


def _call_from_source(src: str, scan: _Scan, *, lenient: bool) -> tuple[str, dict[str, Any]]:
    """Read ``Name(k=v, ...)``.

    Lenient formats (``<API>``, API-Bank) also take bare words (``city=Beijing``),
    a name alone, and the mis-nested quotes of API-Bank's own gold calls
    (``attendees='['John', 'Jane']'``).
    """
    src = src.strip()
    head = (_LENIENT_HEAD if lenient else _CALL_HEAD).match(src)
    if head is None:
        raise _Problem("it does not start with a function name")
    name = head.group(1)
    if head.group(2) is None:
        if lenient and not src[head.end() :].strip():
            return name, {}
        raise _Problem(f"there is no '(' after {name!r}")
    try:
        if "-" in name:  # not a Python identifier: parse the arguments under a stand-in
            _, args = _call_from_node(
                _ast_parse(_PLACEHOLDER + src[head.end(1) :], scan).body, src, lenient
            )
            return name, args
        return _call_from_node(_ast_parse(src, scan).body, src, lenient)
    except _Problem as exc:
        if not (lenient and exc.syntax):
            raise
        close = src.rfind(")")
        if close < head.end():
            raise _Problem(f"the '(' after {name!r} is never closed") from None
        return name, _lenient_arguments(src[head.end() : close], scan)


_SPLIT_TOKEN = re.compile(r"[()\[\]{},'\"]")
# At the top level a quote closes a value only where the next thing is ", key=" or the
# end: that is how API-Bank's 'a 'b' c' values are read as one string.
_TOP_CLOSER = {q: re.compile(q + r"(?=\s*(?:,\s*[A-Za-z_][\w.-]*\s*=|\Z))") for q in ("'", '"')}
_STRING_REST = {q: re.compile(f"[^{q}\\\\]*(?:\\\\[\\s\\S][^{q}\\\\]*)*{q}") for q in ("'", '"')}
_LENIENT_KEY = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*=(?!=)")


def _split_top_level(s: str) -> list[str]:
    """Split argument text at top-level commas, tolerating mis-nested quotes."""
    parts: list[str] = []
    depth = 0
    seg_start = 0
    skip = 0
    # quote char and kind -> index from which no closer exists (each search runs once)
    dead: dict[tuple[str, bool], int] = {}
    for m in _SPLIT_TOKEN.finditer(s):
        i = m.start()
        if i < skip:
            continue
        ch = s[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == ",":
            if depth == 0:
                parts.append(s[seg_start:i])
                seg_start = i + 1
        else:
            kind = (ch, depth == 0)
            if dead.get(kind, len(s) + 1) <= i:
                continue
            closer = _TOP_CLOSER[ch].search if depth == 0 else _STRING_REST[ch].match
            found = closer(s, i + 1)
            if found is None:
                dead[kind] = i
            else:
                skip = found.end()
    parts.append(s[seg_start:])
    return parts


def _lenient_value(text: str, key: str, scan: _Scan) -> tuple[Any, bool]:
    if not text:
        raise _Problem(f"argument {key!r} has no value")
    try:
        tree = _ast_parse(text, scan)
    except _Problem:
        pass
    else:
        return _literal(tree.body, text, key, lenient=True)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1], False
    if "(" in text:
        raise _Problem(f"argument {key!r} is an expression, not a literal value")
    return text, True


def _lenient_arguments(argtext: str, scan: _Scan) -> dict[str, Any]:
    parts = _split_top_level(argtext)
    args: dict[str, Any] = {}
    bare_key: str | None = None
    for index, part in enumerate(parts, 1):
        if not part.strip():
            if len(parts) == 1 or (index == len(parts) and index > 1):
                continue  # "f()" or a trailing comma
            raise _Problem("there is an empty argument between two commas")
        km = _LENIENT_KEY.match(part)
        if km is None:
            if bare_key is not None:
                # city=Beijing, China: an unquoted value that itself holds a comma
                args[bare_key] = f"{args[bare_key]},{part.rstrip()}"
                continue
            raise _Problem(f"positional argument {index} has no parameter name")
        key = km.group(1)
        if key in args:
            raise _Problem(f"argument {key!r} is given twice")
        args[key], bare = _lenient_value(part[km.end() :].strip(), key, scan)
        bare_key = key if bare else None
    return args


_PY_TOKEN = re.compile(r"[()'\"]")
_PY_STRING_REST = {
    q: re.compile(f"[^{q}\\\\\\n]*(?:\\\\[\\s\\S][^{q}\\\\\\n]*)*{q}") for q in ("'", '"')
}
_STRING_PREFIX = frozenset("rRbBfFuU")
_PY_PAREN = re.compile(r"[\w.]\(")
_NAME_RUN = re.compile(r"[\w.-]{0,257}")
_DOTTED_NAME = re.compile(r"[^\W\d]\w*(?:-\w+)*(?:\.[^\W\d]\w*(?:-\w+)*)*")


class _ParenMatcher:
    """Matching ``)`` for each ``(``, computed lazily in one left-to-right pass.

    Quotes open a string only after a non-word character and only when they close on
    the same line, so the apostrophe in prose ("don't") does not hide later calls.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _PY_TOKEN.finditer(text)
        self.pending: re.Match[str] | None = None
        self.too_long = False
        self.skip = 0
        self.stack: list[int] = []
        self.matches: dict[int, int] = {}
        self.done = False
        self.dead: dict[str, int] = {}  # quote char -> end of a line where it never closes

    def match(self, open_pos: int) -> int | None:
        """The ``)`` closing ``open_pos``, or None when not closed within a call's length."""
        self.too_long = False
        if open_pos in self.matches or self.done:
            return self.matches.get(open_pos)
        text, stack, matches = self.text, self.stack, self.matches
        limit = open_pos + _MAX_CALL_SPAN
        while True:
            m = self.pending or next(self.tokens, None)
            self.pending = None
            if m is None:
                break
            i = m.start()
            if i >= limit:
                self.pending = m  # later calls resume here: the pass never rescans
                self.too_long = True
                return None
            if i < self.skip:
                continue
            ch = text[i]
            if ch == "(":
                stack.append(i)
            elif ch == ")":
                if stack:
                    opened = stack.pop()
                    matches[opened] = i
                    if opened == open_pos:
                        return i
            else:
                self.skip = self._string_end(i, ch)
        self.done = True
        return matches.get(open_pos)

    def _string_end(self, i: int, quote: str) -> int:
        """Where the string opened at ``i`` ends, or 0 when the quote opens none."""
        text = self.text
        if self.dead.get(quote, -1) > i:
            return 0
        j = i
        while j > 0 and i - j < 2 and text[j - 1] in _STRING_PREFIX:
            j -= 1
        if j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            return 0  # an apostrophe inside a word
        found = _PY_STRING_REST[quote].match(text, i + 1)
        if found is None:
            eol = text.find("\n", i)
            self.dead[quote] = eol if eol != -1 else len(text)
            return 0
        return found.end()


def _detect_python(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "(" not in text:
        return
    # Reading the name backwards from each "(" on the reversed text keeps this linear
    # even for a megabyte-long word (a forward regex would retry inside it).
    reverse = text[::-1]
    matcher = _ParenMatcher(text)
    skip_until = 0
    for head in _PY_PAREN.finditer(text):
        paren = head.end() - 1
        if paren < skip_until:
            continue
        run = _NAME_RUN.match(reverse, len(text) - paren)
        # a hyphen joins the parts of one name (`get-weather`), never starts one
        name = run.group()[::-1].lstrip("-") if run is not None else ""
        if "-" in name and _DOTTED_NAME.fullmatch(name) is None:
            name = name.rsplit("-", 1)[1]  # `2-get(`, `a--b(`: the call is the last word
        start = paren - len(name)
        if (
            len(name) > 256
            or _DOTTED_NAME.fullmatch(name) is None
            or keyword.iskeyword(name.split(".")[0])
            or scan.claimed_end(start) is not None
        ):
            continue
        scan.tick("Python call")
        close = matcher.match(paren)
        if close is None:
            problem = (
                f"looks like a Python call but the call to {name!r} is longer than "
                f"{_MAX_CALL_SPAN} characters"
                if matcher.too_long
                else f"looks like a Python call but the '(' after {name!r} is never closed"
            )
            yield _Candidate(start, paren + 1, "python", claims=False, problem=problem)
            continue
        skip_until = close + 1
        try:
            sent = _client_call(name, text[start : close + 1], scan)
        except _Problem as exc:
            problem = f"looks like an HTTP client call but {exc.reason}"
            yield _Candidate(start, close + 1, "http", claims=False, problem=problem)
            continue
        if sent is not None:
            yield _Candidate(start, close + 1, "http", requests=(sent,))
            continue
        try:
            call_name, args = _call_from_source(text[start : close + 1], scan, lenient=False)
        except _Problem as exc:
            problem = f"looks like a Python call but {exc.reason}"
            yield _Candidate(start, close + 1, "python", claims=False, problem=problem)
        else:
            request = ApiRequest(name=call_name, arguments=args, format="python")
            yield _Candidate(start, close + 1, "python", requests=(request,))


# ------------------------------------------------- HTTP client calls in Python code

#: the HTTP method functions of requests and httpx (``requests.post``, ``client.get``)
_CLIENT_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
#: modules whose method functions send a request whatever the first argument looks like
_CLIENT_MODULES = frozenset({"requests", "httpx"})
#: what a request call's keywords carry, under the key :func:`request_from_http` reads
_CLIENT_KEYWORDS = {
    "params": "params",
    "json": "json",
    "data": "data",
    "content": "body",
    "headers": "headers",
    "cookies": "cookies",
}
#: a call whose first argument is a quoted URL or path (``get("https://...``, ``post('/x``),
#: or a method before it (``request("PUT", "/x"``)
_URL_FIRST = re.compile(r"""\(\s*(?:["'][A-Za-z]{1,10}["']\s*,\s*)?[rRuU]?["'](?:https?://|/)""")
#: keywords that change how a request is sent, not what it says: not read
_CLIENT_IGNORED = frozenset(
    {"timeout", "verify", "allow_redirects", "follow_redirects", "stream", "proxies", "cert"}
)


def _client_call(name: str, src: str, scan: _Scan) -> ApiRequest | None:
    """The request an HTTP client call sends, read without running it:
    ``requests.post(url, json={...})``, ``httpx.get(url, params=...)``,
    ``requests.request("PUT", url, ...)``, ``session.get("https://...")`` (any object's
    method function on a literal absolute URL), or ``client.post("/orders")`` (a client's
    or a session's on a path; a route such as ``@app.get("/items")`` is none). ``None``:
    not such a call.
    Headers, cookies and credentials held in variables (``headers=HEADERS``) are left
    out; a query or body held in one cannot be checked, and says so. ``files=`` are the
    parts of a multipart body, their content unknown here.

    >>> r = _client_call("requests.post", 'requests.post("/orders", json={"qty": 2})',
    ...                  _Scan("x"))
    >>> r.method, r.url, r.body
    ('POST', '/orders', {'qty': 2})
    """
    module, _, function = name.rpartition(".")
    if not module or (function not in _CLIENT_METHODS and function != "request"):
        return None
    client = module.split(".")[-1] in _CLIENT_MODULES
    if not client and _URL_FIRST.search(src) is None:
        return None  # ``cache.get("key")``, ``d.get(x)``: not parsed twice
    node = _ast_parse(src, scan).body
    if not isinstance(node, ast.Call):
        return None
    positional = list(node.args)
    record: dict[str, Any] = {}
    if function == "request":
        method = _literal_or_none(positional.pop(0)) if positional else None
        if not isinstance(method, str):
            return None
        record["method"] = method
    else:
        record["method"] = function.upper()
    url = _literal_or_none(positional[0]) if positional else None
    if not isinstance(url, str):
        if client:
            raise _Problem("its URL is made when the code runs (a variable or an f-string)")
        return None
    holder = module.split(".")[-1].lower()
    if not client and not (
        url.startswith(("http://", "https://"))
        or (url.startswith("/") and ("client" in holder or "session" in holder))
    ):
        # ``cache.get("key")``, a web framework's route (``@app.get("/items")``): no request
        return None
    if len(positional) > 1:
        raise _Problem("only the URL may be positional; write params=, json= or data=")
    record["url"] = url
    files: list[str] = []
    for kw in node.keywords:
        if kw.arg is None:
            raise _Problem("'**' unpacking cannot be read; write each keyword")
        if kw.arg in _CLIENT_IGNORED or kw.arg == "auth":
            continue
        if kw.arg == "files":
            if not isinstance(kw.value, ast.Dict):
                raise _Problem("argument 'files' is not a literal dict of parts")
            files = [str(k.value) for k in kw.value.keys if isinstance(k, ast.Constant)]
            continue
        key = _CLIENT_KEYWORDS.get(kw.arg)
        if key is None:
            raise _Problem(f"keyword {kw.arg!r} is not one a request is read from")
        if key in ("headers", "cookies") and _literal_or_none(kw.value) is None:
            continue  # held in a variable: not known here, and not the call's arguments
        record[key], _ = _literal(kw.value, src, kw.arg, lenient=False)
    if files:
        data = record.pop("data", None)
        fields = [(str(k), str(v), None) for k, v in data.items()] if isinstance(data, dict) else []
        record["body"] = multipart_body([*fields, *((f, "", f) for f in files)])
        headers = record.get("headers")
        record["headers"] = {
            **(headers if isinstance(headers, dict) else {}),
            "Content-Type": f"multipart/form-data; boundary={MULTIPART_BOUNDARY}",
        }
    from autofeedback._parse._json import _http_from_record

    try:
        request = _http_from_record(record, "http")
    except RequestFormatError as exc:
        raise _Problem(str(exc)) from None
    return replace(request, unread_files=tuple(dict.fromkeys(files))) if files else request


def _literal_or_none(node: ast.expr) -> Any:
    try:
        return _convert(node, lenient=False)
    except _NotLiteral:
        return None
