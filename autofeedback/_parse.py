"""Stage E1: find the API requests in raw LLM output.

:func:`parse_output` looks for every request format the supported benchmarks and agent
frameworks produce, everywhere in the text (inside Markdown fences and prose):

* ``<API>Name(key=value)</API>`` (the AutoFeedback paper), closing tag optional;
* Python calls ``Name(key=value)``, dotted names included (BFCL);
* ``API-Request: [Name(key='value'), ...]`` (API-Bank);
* JSON function calls (``{"name", "arguments"}`` and the common variants, LangChain's
  ``{"tool", "tool_input"}``, ToolAlpaca's ``{"Action", "Action_Input"}``), the ReAct
  text form ``Action: Name`` / ``Action Input: {...}``, and OpenAI ``tool_calls``;
* ``Operation: GET`` / ``Input: {"url": ...}`` (RestGPT);
* ``GET /path?query`` request lines with an optional JSON body, and ``curl`` commands.

Model output is never evaluated: Python-style arguments are read with :func:`ast.parse`
and only literal nodes are converted. A match that lies inside a larger match of another
format (the Python call inside ``<API>...</API>``, the JSON body after ``POST /pets``)
is dropped, so each request is reported once.

Every scan is linear in the input (no regex with nested quantifiers over model text,
bounded retries on malformed JSON), input is capped at :data:`MAX_INPUT_CHARS`, and
deep nesting becomes a problem, never a ``RecursionError``.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import shlex
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl

from autofeedback._exceptions import AutoFeedbackError
from autofeedback._model import ApiRequest, RequestFormat

__all__ = [
    "MAX_INPUT_CHARS",
    "ParseResult",
    "RequestFormatError",
    "parse_output",
    "request_from_call",
    "request_from_http",
]

#: Longer outputs are refused with a problem instead of being scanned.
MAX_INPUT_CHARS = 1_000_000

# A real output never holds this many fragments of one format; past it the text is
# hostile and scanning that format stops, so the total work stays small.
_MAX_ATTEMPTS = 1_000
_MAX_CURL_CHARS = 100_000
# Items (commas, colons, brackets...) in one Python-style call, and in all of them.
_MAX_CALL_WEIGHT = 5_000
_MAX_CALL_SPAN = 100_000
_AST_BUDGET = 20_000
_NO_REQUEST = "no API request found in the output"
_HTTP_METHODS = frozenset(
    {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"}
)


class RequestFormatError(AutoFeedbackError, ValueError):
    """A call or HTTP record does not have the shape of an API request.

    A :class:`ValueError` too, since callers hand it malformed values.
    """


@dataclass(frozen=True)
class ParseResult:
    """The requests found in one LLM output, in order of appearance.

    ``problem`` is set only when no request could be parsed: one line saying which
    format came closest and where it broke; ``format_hint`` names that format.
    """

    requests: tuple[ApiRequest, ...]
    problem: str | None = None
    format_hint: str | None = None


# --------------------------------------------------------------------------- helpers


class _Problem(Exception):
    """Why one candidate is not a request; ``syntax`` marks text that does not parse."""

    def __init__(self, reason: str, *, syntax: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.syntax = syntax


class _NotLiteral(Exception):
    """An AST node that is code, not a literal value."""


@dataclass
class _Candidate:
    """One match of one format: requests, or a problem, or (neither) a claimed span."""

    start: int
    end: int
    format: str
    requests: tuple[ApiRequest, ...] = ()
    problem: str | None = None
    #: A claiming candidate hides the candidates of other formats inside its span.
    claims: bool = True
    #: Said when nothing better is found (a JSON object that is not a call).
    note: str | None = None
    rank: int = 0


@dataclass
class _Scan:
    """The text under scan, the spans claimed so far, and the budgets that keep
    hostile input cheap (JSON retries, Python parsing, attempts per format)."""

    text: str
    json_budget: int = 0
    #: Python's parser is slow on dense input (~20 µs per list item): a global cap.
    ast_budget: int = _AST_BUDGET
    failures: dict[str, int] = field(default_factory=dict)
    #: Disjoint spans already claimed by earlier detectors, sorted; a later detector
    #: skips matches starting inside them (they would be dropped as contained anyway).
    claimed: list[tuple[int, int]] = field(default_factory=list)
    claimed_starts: list[int] = field(default_factory=list)

    def claim(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self.claimed + [s for s in spans if s[1] > s[0]]):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self.claimed = merged
        self.claimed_starts = [start for start, _ in merged]

    def claimed_end(self, pos: int) -> int | None:
        """The end of the claimed span strictly containing ``pos``, if any."""
        i = bisect_right(self.claimed_starts, pos) - 1
        if i >= 0 and self.claimed[i][0] < pos < self.claimed[i][1]:
            return self.claimed[i][1]
        return None

    def __post_init__(self) -> None:
        self.json_budget = 2 * len(self.text) + 200_000

    def charge(self, src: str) -> None:
        """Pay for parsing ``src`` with :func:`ast.parse`, or refuse."""
        weight = sum(map(src.count, ",:=([{-+'\"")) + len(src) // 1000
        if weight > _MAX_CALL_WEIGHT:
            raise _Problem(f"it is too large to check ({len(src)} characters)")
        if weight > self.ast_budget:
            raise _GiveUp("the Python-style calls in the output are too large to check")
        self.ast_budget -= weight

    def decode(self, pos: int) -> tuple[Any, int]:
        """``raw_decode`` at ``pos``; failures become a :class:`_Problem`."""
        try:
            return _DECODER.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            # An unterminated string is reported where it starts but scanned to the end.
            reach = len(self.text) if exc.msg.startswith("Unterminated") else exc.pos
            self.json_budget -= max(1, reach - pos)
            raise _Problem(f"the JSON does not parse: {_json_where(exc, pos)}") from None
        except RecursionError:
            self.json_budget -= 1_000
            raise _Problem("the JSON is nested too deeply") from None
        except MemoryError:
            raise _Problem("the JSON is too large") from None
        except ValueError as exc:  # e.g. an integer with more digits than Python allows
            self.json_budget -= 1_000
            raise _Problem(f"the JSON does not parse: {exc}") from None

    def tick(self, fmt: str) -> None:
        """Count one attempt at ``fmt``; raise :class:`_GiveUp` past the cap."""
        self.failures[fmt] = self.failures.get(fmt, 0) + 1
        if self.failures[fmt] > _MAX_ATTEMPTS:
            raise _GiveUp(f"the output holds more than {_MAX_ATTEMPTS} {fmt} fragments")


class _GiveUp(Exception):
    """Too many fragments of one format: the input is hostile, stop scanning it."""


_DECODER = json.JSONDecoder()


def _json_where(exc: json.JSONDecodeError, start: int) -> str:
    """``"Expecting ',' delimiter at line 1 column 35"``, counted from ``start``."""
    line = exc.doc.count("\n", start, exc.pos) + 1
    line_start = exc.doc.rfind("\n", start, exc.pos)
    column = exc.pos - (line_start if line_start != -1 else start - 1)
    return f"{exc.msg} at line {line} column {column}"


def _json_loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Problem(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise _Problem("it is nested too deeply") from None
    except ValueError as exc:
        raise _Problem(str(exc)) from None


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


# Identifiers as Python spells them: a letter or "_" (any script), then word characters.
_CALL_HEAD = re.compile(r"([^\W\d]\w*(?:\.[^\W\d]\w*)*)[ \t]*(\()?")
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


# ---------------------------------------------------------------- JSON call shapes


def _norm(key: str) -> str:
    return key.strip().lower().replace(" ", "_").replace("-", "_")


_NAME_KEYS = ("name", "function", "tool", "tool_name", "function_name", "api_name", "api", "action")
# Keys that say "this is a call" on their own; a bare "name" could be any object.
_STRONG_NAME_KEYS = frozenset(_NAME_KEYS) - {"name", "api"}
_ARG_KEYS = (
    "arguments",
    "parameters",
    "args",
    "params",
    "tool_input",
    "action_input",
    "input",
    "kwargs",
    "api_args",
)


def _keys(obj: Mapping[str, Any]) -> dict[str, str]:
    """Normalised key -> the key as written (first spelling wins)."""
    out: dict[str, str] = {}
    for k in obj:
        if isinstance(k, str):
            out.setdefault(_norm(k), k)
    return out


def _looks_like_schema(value: Any) -> bool:
    return isinstance(value, Mapping) and "properties" in value and value.get("type") == "object"


def _call_shape(obj: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """``(name key, arguments key)`` when ``obj`` is shaped like a function call."""
    keys = _keys(obj)
    name_key = next((keys[k] for k in _NAME_KEYS if k in keys), None)
    if name_key is None or isinstance(obj[name_key], Mapping):
        return None
    arg_key = next((keys[k] for k in _ARG_KEYS if k in keys), None)
    if arg_key is None and _norm(name_key) not in _STRONG_NAME_KEYS:
        return None
    # A tool *definition* echoed back ({"name", "description", "parameters": schema}).
    if arg_key is not None and "description" in keys and _looks_like_schema(obj[arg_key]):
        return None
    return name_key, arg_key


def _arguments(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = _json_loads(value)
        except _Problem as exc:
            raise RequestFormatError(
                f"the arguments of {name!r} are not valid JSON: {exc.reason}"
            ) from None
    if not isinstance(value, Mapping):
        raise RequestFormatError(
            f"the arguments of {name!r} must be a JSON object, got {_type_name(value)}"
        )
    return dict(value)


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "null"
    return type(value).__name__


def _call_from_mapping(call: Mapping[str, Any], fmt: RequestFormat) -> ApiRequest:
    if not isinstance(call, Mapping):
        raise RequestFormatError(f"a call must be a JSON object, got {_type_name(call)}")
    function = call.get("function")
    if isinstance(function, Mapping):
        # OpenAI tool_call {"type": "function", "function": {"name", "arguments"}}
        return _call_from_mapping(function, "openai")
    shape = _call_shape(call)
    if shape is None:
        shown = ", ".join(repr(k) for k in list(call)[:6]) or "no keys"
        raise RequestFormatError(
            f"the call has no function name: expected a key such as 'name', 'tool' or "
            f"'Action' (got {shown})"
        )
    name_key, arg_key = shape
    name = call[name_key]
    if not isinstance(name, str) or not name.strip():
        raise RequestFormatError(f"the function name under {name_key!r} must be a non-empty string")
    name = name.strip()
    arguments = _arguments(call[arg_key] if arg_key is not None else None, name)
    return ApiRequest(name=name, arguments=arguments, format=fmt, raw=_dump(call))


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def request_from_call(call: Mapping[str, Any]) -> ApiRequest:
    """Turn one structured function call into an :class:`ApiRequest`.

    Accepts ``{"name", "arguments"}`` (arguments an object or a JSON string), the usual
    variants (``parameters``, ``args``, ``{"tool", "tool_input"}``,
    ``{"Action", "Action_Input"}``) and OpenAI's ``{"function": {"name", "arguments"}}``.
    Raises :class:`RequestFormatError` with a one-line reason otherwise.

    >>> request_from_call({"name": "get_weather", "arguments": '{"city": "Paris"}'}).arguments
    {'city': 'Paris'}
    """
    return _call_from_mapping(call, "json")


def _http_from_record(record: Mapping[str, Any], fmt: RequestFormat) -> ApiRequest:
    if not isinstance(record, Mapping):
        raise RequestFormatError(f"an HTTP request must be an object, got {_type_name(record)}")
    method = record.get("method")
    if not isinstance(method, str) or not method.strip():
        raise RequestFormatError("the request has no HTTP method")
    method = method.strip().upper()
    if method not in _HTTP_METHODS:
        raise RequestFormatError(f"unknown HTTP method {method!r}")
    url = record.get("url")
    if not isinstance(url, str) or not url.strip():
        raise RequestFormatError("the request has no URL (expected a string under 'url')")
    params: Any = record.get("params")
    if params is None:
        params = {}
    elif isinstance(params, str):
        params = dict(parse_qsl(params.lstrip("?"), keep_blank_values=True))
    elif not isinstance(params, Mapping):
        raise RequestFormatError(f"'params' must be an object, got {_type_name(params)}")
    headers: Any = record.get("headers")
    if headers is None:
        headers = {}
    elif not isinstance(headers, Mapping):
        raise RequestFormatError(f"'headers' must be an object, got {_type_name(headers)}")
    body = None
    for key in ("json", "data", "body"):
        if record.get(key) is not None:
            body = record[key]
            break
    return ApiRequest(
        method=method,
        url=url.strip(),
        params=dict(params),
        headers={str(k): str(v) for k, v in headers.items()},
        body=body,
        format=fmt,
        raw=_dump(record),
    )


def request_from_http(record: Mapping[str, Any]) -> ApiRequest:
    """Turn ``{"method", "url", "params", "headers", "json", "data"}`` into a request.

    ``url`` is kept as written (path and query, absolute or relative); the body is
    ``json``, else ``data``, else ``body``. Extra keys are ignored. Raises
    :class:`RequestFormatError` for a missing or unknown method or a missing URL.

    >>> request_from_http({"method": "get", "url": "/movie/550?language=en"}).method
    'GET'
    """
    return _http_from_record(record, "request")


def _requests_from_json(value: Any) -> list[ApiRequest] | None:
    """The requests a decoded JSON value holds; ``None`` when it is not call-shaped.

    Raises :class:`RequestFormatError` when it is call-shaped but broken.
    """
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            http = [_http_from_line(v) for v in value]
            found = [r for r in http if r is not None]
            return found if len(found) == len(value) else None
        out: list[ApiRequest] = []
        for index, item in enumerate(value, 1):
            if not isinstance(item, Mapping):
                continue
            try:
                got = _requests_from_json(item)
            except RequestFormatError as exc:
                raise RequestFormatError(f"item {index} of the list: {exc}") from None
            out.extend(got or ())
        return out or None
    if not isinstance(value, Mapping):
        return None
    calls: list[Any] = []
    if isinstance(value.get("tool_calls"), list):
        calls = value["tool_calls"]
    elif isinstance(value.get("choices"), list):
        for choice in value["choices"]:
            message = choice.get("message") if isinstance(choice, Mapping) else None
            if isinstance(message, Mapping):
                calls.extend(_message_calls(message))
    elif isinstance(value.get("message"), Mapping):
        calls = _message_calls(value["message"])
    elif isinstance(value.get("function_call"), Mapping):
        calls = [value["function_call"]]
    if calls:
        out = []
        for index, call in enumerate(calls, 1):
            try:
                out.append(_call_from_mapping(call, "openai"))
            except RequestFormatError as exc:
                where = f"tool call {index}: " if len(calls) > 1 else ""
                raise RequestFormatError(f"{where}{exc}") from None
        return out
    function = value.get("function")
    if isinstance(function, Mapping):
        if _looks_like_schema(function.get("parameters")):
            return None  # a tool definition, not a call
        return [_call_from_mapping(value, "openai")]
    if _call_shape(value) is not None:
        return [_call_from_mapping(value, "json")]
    if "url" in value and "method" in value:
        return [_http_from_record(value, "request")]
    return None


def _message_calls(message: Mapping[str, Any]) -> list[Any]:
    if isinstance(message.get("tool_calls"), list):
        return list(message["tool_calls"])
    if isinstance(message.get("function_call"), Mapping):
        return [message["function_call"]]
    return []


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


# ---------------------------------------------------------------------- detectors


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


_SPACE = re.compile(r"\s*")
_LINE_SPACE = re.compile(r"[ \t]*")


def _skip_space(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches


def _at_line_start(text: str, pos: int) -> bool:
    """Only blanks (or Markdown bold stars) between the line start and ``pos``."""
    line_start = text.rfind("\n", max(0, pos - 200), pos) + 1
    if line_start == 0 and pos > 200:
        return False
    return not text[line_start:pos].strip(" \t*")


def _glued(text: str, pos: int, extra: str) -> bool:
    """Whether ``pos`` continues a word (``XGET``, ``/GET``) rather than starting one."""
    return pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] in extra)


_REACT = re.compile(
    r"[Aa][Cc][Tt][Ii][Oo][Nn]\**[ \t]*:([^\n]*)\n(?:[ \t]*\r?\n)*"
    r"[ \t]*\**[Aa][Cc][Tt][Ii][Oo][Nn][ _]?[Ii][Nn][Pp][Uu][Tt]\**[ \t]*:"
)
_NOT_AN_ACTION = frozenset({"final answer", "finish", "none", "n/a", ""})


def _detect_react(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "ction" not in text and "CTION" not in text:
        return
    for m in _REACT.finditer(text):
        if not _at_line_start(text, m.start()):
            continue
        scan.tick("ReAct action")
        name = m.group(1).strip().strip("`*'\"").strip()
        if name.lower() in _NOT_AN_ACTION:
            continue
        j = _skip_space_line(text, m.end())
        end = j
        try:
            if text[j : j + 1] in ("{", "["):
                value, end = scan.decode(j)
                if not isinstance(value, Mapping):
                    raise _Problem(
                        f"the Action Input of {name!r} must be a JSON object, "
                        f"got {_type_name(value)}"
                    )
                args = dict(value)
            else:
                eol = text.find("\n", j)
                end = eol if eol != -1 else len(text)
                given = text[j:end].strip().strip("`").strip()
                if given.lower() not in ("", "none", "null", "{}"):
                    raise _Problem(
                        f"the Action Input of {name!r} must be a JSON object, got {given[:40]!r}"
                    )
                args = {}
        except _Problem as exc:
            reason = exc.reason.replace("the JSON", f"the Action Input of {name!r}", 1)
            yield _Candidate(
                m.start(), end, "json", problem=f"looks like a ReAct action but {reason}"
            )
        else:
            request = ApiRequest(name=name, arguments=args, format="json")
            yield _Candidate(m.start(), end, "json", requests=(request,))


def _skip_space_line(text: str, pos: int) -> int:
    """Skip spaces, and line breaks only when a JSON value starts after them."""
    j = _skip_space(text, pos)
    if text[j : j + 1] in ("{", "["):
        return j
    return _LINE_SPACE.match(text, pos).end()  # type: ignore[union-attr]


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
        "-F",
        "--form",
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
    text = scan.text
    for m in _CURL.finditer(text):
        if _glued(text, m.start(), "_.-"):
            continue
        scan.tick("curl command")
        end = _command_end(text, m.start())
        try:
            if end - m.start() > _MAX_CURL_CHARS:
                raise _Problem(f"the command is longer than {_MAX_CURL_CHARS} characters")
            request = _request_from_curl(text[m.start() : end])
        except (_Problem, RequestFormatError) as exc:
            reason = exc.reason if isinstance(exc, _Problem) else str(exc)
            yield _Candidate(
                m.start(), end, "http", problem=f"looks like a curl command but {reason}"
            )
        else:
            if request is not None:
                yield _Candidate(m.start(), end, "http", requests=(request,))


def _command_end(text: str, pos: int) -> int:
    """End of a shell command, following backslash line continuations."""
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
        elif tok in _CURL_DATA:
            data.append(next(words, ""))
            if tok == "--json":
                headers.setdefault("Content-Type", "application/json")
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
    payload = "&".join(data)
    params: dict[str, str] = {}
    body: Any = None
    if get:
        params = dict(parse_qsl(payload, keep_blank_values=True))
        method = method or "GET"
    elif data:
        try:
            body = json.loads(payload)
        except (ValueError, RecursionError):
            body = payload  # form data stays text
    method = (method or ("POST" if data else "GET")).upper()
    if method not in _HTTP_METHODS:
        raise _Problem(f"unknown HTTP method {method!r}")
    return ApiRequest(
        method=method, url=url, params=params, headers=headers, body=body, format="http"
    )


def _detect_http(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    for m in _HTTP_REQUEST.finditer(text):
        if _glued(text, m.start(), "_/.-"):
            continue
        scan.tick("HTTP request line")
        method = m.group(1)
        url = _clean_url(m.group(2))
        end = m.start(2) + len(url)
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


_JSON_START = re.compile(r"\{\s*[\"}]|\[\s*[\[{\"\]0-9tfn-]")
_CLOSING = re.compile(r"[\]}]")
_CALL_KEY_HINT = re.compile(
    r"\"(?:name|function|tool|action|arguments|parameters|tool_calls|Action)\"", re.IGNORECASE
)


def _detect_json(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    pos = 0
    while scan.json_budget > 0 and (m := _JSON_START.search(text, pos)) is not None:
        start = m.start()
        claimed = scan.claimed_end(start)
        if claimed is not None:
            pos = claimed
            continue
        scan.tick("JSON")
        try:
            value, end = scan.decode(start)
        except _Problem as exc:
            if "nested too deeply" in exc.reason:
                # Every bracket of the run would fail the same way: jump past it.
                closing = _CLOSING.search(text, start)
                pos = closing.end() if closing is not None else len(text)
            else:
                pos = start + 1
            # Report only fragments that look like a JSON call (a key such as "name").
            window = text[start : start + 300]
            if "nested" in exc.reason or _CALL_KEY_HINT.search(window):
                yield _Candidate(
                    start,
                    start + 1,
                    "json",
                    problem=f"looks like a JSON function call but {exc.reason}",
                    claims=False,
                )
            continue
        pos = end
        try:
            found = _requests_from_json(value)
        except RequestFormatError as exc:
            fmt = "openai" if "tool_call" in text[start:end] else "json"
            label = "an OpenAI tool call" if fmt == "openai" else "a JSON function call"
            yield _Candidate(start, end, fmt, problem=f"looks like {label} but {exc}")
            continue
        if found:
            yield _Candidate(
                start,
                end,
                found[0].format,
                requests=tuple(_with_raw(found, text, start, end, value)),
            )
        else:
            note = None
            if isinstance(value, Mapping):
                note = (
                    "found a JSON object but not a function call: expected a name key such "
                    "as 'name', 'tool' or 'Action' and an arguments key such as "
                    "'arguments', 'parameters' or 'Action_Input'"
                )
            yield _Candidate(start, end, "json", note=note)
    if scan.json_budget <= 0:
        yield _Candidate(
            len(text),
            len(text),
            "json",
            claims=False,
            problem="gave up looking for JSON: the output holds too much malformed JSON",
        )


def _with_raw(
    found: list[ApiRequest], text: str, start: int, end: int, value: Any
) -> list[ApiRequest]:
    """Give each item of a top-level JSON list of calls its own ``raw`` text."""
    if len(found) <= 1 or not isinstance(value, list) or len(value) != len(found):
        return found
    spans: list[str] = []
    pos = start + 1
    for _ in value:
        pos = _skip_space(text, pos)
        _, item_end = _DECODER.raw_decode(text, pos)
        spans.append(text[pos:item_end])
        pos = _skip_space(text, item_end)
        if text[pos : pos + 1] == ",":
            pos += 1
    return [replace(r, raw=raw) for r, raw in zip(found, spans, strict=True)]


_PY_TOKEN = re.compile(r"[()'\"]")
_PY_STRING_REST = {
    q: re.compile(f"[^{q}\\\\\\n]*(?:\\\\[\\s\\S][^{q}\\\\\\n]*)*{q}") for q in ("'", '"')
}
_STRING_PREFIX = frozenset("rRbBfFuU")
_PY_PAREN = re.compile(r"[\w.]\(")
_NAME_RUN = re.compile(r"[\w.]{0,257}")
_DOTTED_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


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
        name = run.group()[::-1] if run is not None else ""
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
            call_name, args = _call_from_source(text[start : close + 1], scan, lenient=False)
        except _Problem as exc:
            problem = f"looks like a Python call but {exc.reason}"
            yield _Candidate(start, close + 1, "python", claims=False, problem=problem)
        else:
            request = ApiRequest(name=call_name, arguments=args, format="python")
            yield _Candidate(start, close + 1, "python", requests=(request,))


# Earlier detectors win ties: the more specific format names the candidate.
_DETECTORS: tuple[tuple[Callable[[_Scan], Iterator[_Candidate]], str], ...] = (
    (_detect_api_tag, "api-tag"),
    (_detect_api_bank, "api-bank"),
    (_detect_restgpt, "restgpt"),
    (_detect_react, "json"),
    (_detect_curl, "http"),
    (_detect_http, "http"),
    (_detect_json, "json"),
    (_detect_python, "python"),
)


def _run(
    detector: Callable[[_Scan], Iterator[_Candidate]], fmt: str, scan: _Scan, rank: int
) -> list[_Candidate]:
    found: list[_Candidate] = []
    problem = None
    try:
        for candidate in detector(scan):
            candidate.rank = rank
            found.append(candidate)
    except _GiveUp as exc:
        problem = f"gave up: {exc}"
    except (RecursionError, MemoryError):
        problem = "the output is nested too deeply to parse"
    if problem is not None:
        # Placed at the end so that a specific problem found earlier is reported first.
        end = len(scan.text)
        found.append(_Candidate(end, end, fmt, claims=False, rank=rank, problem=problem))
    return found


def parse_output(text: str) -> ParseResult:
    """Find every API request in one LLM output, in order of appearance.

    Never raises for bad output: when nothing parses, ``problem`` says which format came
    closest and where it broke (``format_hint`` names that format).

    >>> parse_output("Sure! <API>get_weather(city=Beijing, days=3)</API>").requests[0].arguments
    {'city': 'Beijing', 'days': 3}
    >>> parse_output("get_weather('Paris')").problem
    'looks like a Python call but positional argument 1 has no parameter name'
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_output() takes the output text as str, got {type(text).__name__}")
    if len(text) > MAX_INPUT_CHARS:
        return ParseResult(
            (),
            problem=f"the output is too long to parse: {len(text)} characters "
            f"(limit {MAX_INPUT_CHARS})",
        )
    scan = _Scan(text)
    candidates: list[_Candidate] = []
    for rank, (detector, fmt) in enumerate(_DETECTORS):
        found = _run(detector, fmt, scan, rank)
        candidates.extend(found)
        scan.claim([(c.start, c.end) for c in found if c.claims])

    # Outermost first: a match inside a larger claimed match is the same request again.
    selected: list[_Candidate] = []
    last_end = -1
    for c in sorted((c for c in candidates if c.claims), key=lambda c: (c.start, -c.end, c.rank)):
        if c.start >= last_end:
            selected.append(c)
            last_end = c.end
    requests: list[ApiRequest] = []
    for c in selected:
        if c.problem is None:
            for r in c.requests:
                raw = text[c.start : c.end] if len(c.requests) == 1 or not r.raw else r.raw
                requests.append(replace(r, raw=raw))
    if requests:
        return ParseResult(tuple(requests))
    return _explain(candidates, selected)


def _explain(candidates: list[_Candidate], selected: list[_Candidate]) -> ParseResult:
    strong = [c for c in selected if c.problem is not None]
    if strong:
        return ParseResult((), problem=strong[0].problem, format_hint=strong[0].format)
    starts = [c.start for c in selected]  # sorted, and the spans do not overlap

    def hidden(c: _Candidate) -> bool:
        i = bisect_right(starts, c.start) - 1
        if i < 0:
            return False
        outer = selected[i]
        return c.end <= outer.end and (outer.start, outer.end) != (c.start, c.end)

    weak = [c for c in candidates if c.problem is not None and not c.claims and not hidden(c)]
    if weak:
        # Python-looking fragments are common in prose ("see note(s)"): report them last.
        best = min(weak, key=lambda c: (c.format == "python", c.start, c.rank))
        return ParseResult((), problem=best.problem, format_hint=best.format)
    notes = [c for c in selected if c.note is not None]
    if notes:
        return ParseResult((), problem=notes[0].note, format_hint=notes[0].format)
    return ParseResult((), problem=_NO_REQUEST)
