"""Native tool-call formats: the syntax each model family is trained to emit.

Written from each family's published chat template and tool-call convention, with
vLLM's and SGLang's tool-call parsers as the reference for which formats exist and how
they are delimited:

* wrappers around JSON or Python-style calls: ``<tool_call>`` (Qwen 2.5/3, Hermes,
  Granite 3.1+, GLM-4.5), ``<|tool_call|>`` (Granite 3.0), ``[TOOL_CALLS]`` (Mistral,
  xLAM; also Mistral v11's ``name[ARGS]{...}``), ``<|python_tag|>`` (Llama 3.1-3.3),
  ``<tool_calls>`` (MiniMax-M1, Hunyuan, Jamba), ``<|action_start|><|plugin|>``
  (InternLM), ``<|tool_call_start|>`` (LFM2), ``<function_calls>`` (Olmo 3, one
  Python-style call per line), ``<|python_start|>`` (Llama 4), ``<longcat_tool_call>``;
* ``<function=name>{json}</function>`` (Llama 3.1) and
  ``<function=name><parameter=key>value</parameter></function>`` (Qwen3-Coder, Seed-OSS);
* ``<invoke name="..."><parameter name="...">value</parameter></invoke>`` (MiniMax-M2, the
  XML style of the Anthropic prompt format, DeepSeek V3.2's ``<｜DSML｜invoke>`` with
  ``string="false"`` for JSON values or a JSON body, Step3's ``<steptml:invoke>``);
* GLM-4.5's ``<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``;
* DeepSeek V3/R1 and V3.1 ``<｜tool▁call▁begin｜>...<｜tool▁sep｜>...`` tokens;
* Kimi K2 ``<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}``;
* gpt-oss (harmony) ``to=functions.name ... <|message|>{...}<|call|>``;
* FunctionGemma ``<start_function_call>call:name{key:<escape>value<escape>}``;
* tool calls written as XML elements: ``<searchBooks query='dune' limit=10/>`` or
  ``<searchBooks><query>dune</query></searchBooks>`` (read with :mod:`defusedxml`, entity
  expansion off).

Values written as XML text keep the ``"xml"`` format: they are text, read per the
parameter's schema before the value checks (``limit=10`` is an integer where the docs say
so, ``limit=ten`` is still an E4.1). JSON arguments keep their JSON types.

Broken blocks are problems that name the family and where they broke; when the call can
still be read (a truncated JSON object closed, for instance) the problem carries it as a
suggestion, rewritten in the ``<API>`` format.

This module holds what the families share and the wrapper, ``<function=...>`` and
``<invoke>`` families; :mod:`autofeedback._parse._native_tokens` the token-delimited ones
(DeepSeek, Kimi, gpt-oss, FunctionGemma), :mod:`autofeedback._parse._native_xml` tool calls
written as XML elements.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from autofeedback._parse._common import (
    _DECODER,
    RequestFormatError,
    _Candidate,
    _json_where,
    _Problem,
    _Scan,
)
from autofeedback._parse._json import _requests_from_json
from autofeedback._parse._python import _ast_parse, _call_from_node
from autofeedback.core._model import ApiRequest, RequestFormat

if TYPE_CHECKING:
    pass

#: Longest block one call may span; past it the block is reported, not parsed.
_MAX_BLOCK = 100_000
_NAME = r"[A-Za-z_][\w.:-]{0,200}"


# ----------------------------------------------------------------------- helpers


def render_call(name: str, arguments: Mapping[str, Any], *, text_values: bool = False) -> str:
    """A call in the paper's ``<API>`` format, with Python literals for the values.

    ``text_values``: the values were written as XML text, so a number or boolean written
    as text is shown as one (the schema decides later; a quoted ``'10'`` would be E4.1).

    >>> render_call("searchBooks", {"query": "science", "limit": 10})
    "<API>searchBooks(query='science', limit=10)</API>"
    >>> render_call("searchBooks", {"query": "science", "limit": "10"}, text_values=True)
    "<API>searchBooks(query='science', limit=10)</API>"
    """
    shown = []
    for key, value in arguments.items():
        text = value.strip() if text_values and isinstance(value, str) else None
        if text is not None and _SCALAR_TEXT.fullmatch(text):
            shown.append(f"{key}={_BOOLEANS.get(text, text)}")
        else:
            shown.append(f"{key}={_literal_text(value)}")
    return f"<API>{name}({', '.join(shown)})</API>"


_SCALAR_TEXT = re.compile(r"-?\d{1,30}(?:\.\d{1,30})?|true|false")
_BOOLEANS = {"true": "True", "false": "False"}


def _literal_text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:297] + "..."


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _close_json(fragment: str) -> Any:
    """Read a JSON value cut short (a truncated output) by closing what is still open.

    Raises :class:`ValueError` when even the closed text does not parse.
    """
    stack: list[str] = []
    in_string = escape = False
    last_safe = 0  # after the last complete value at the current depth
    for i, ch in enumerate(fragment):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
                last_safe = i + 1
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            last_safe = i + 1
            if not stack:  # the value is complete: what follows is prose
                fragment = fragment[: i + 1]
                break
        elif ch == ",":
            last_safe = i
    closers = "".join(reversed(stack))
    attempts = [fragment + ('"' if in_string else "") + closers]
    attempts.append(fragment[:last_safe].rstrip().rstrip(",") + closers)
    # the commonest slip besides truncation: a trailing comma before a closing bracket
    attempts.append(_TRAILING_COMMA.sub(r"\1", attempts[0]))
    for attempt in attempts:
        try:
            return json.loads(attempt)
        except (ValueError, RecursionError):
            continue
    raise ValueError("not repairable")


def _salvage_json(fragment: str) -> str | None:
    """The first call in a truncated JSON fragment, rewritten as ``<API>...</API>``."""
    if len(fragment) > _MAX_BLOCK:
        return None
    try:
        value = _close_json(fragment.strip())
        found = _requests_from_json(value)
    except (ValueError, RequestFormatError):
        return None
    if not found or found[0].name is None:
        return None
    return render_call(found[0].name, found[0].arguments)


def _salvage_named(name: str, arguments: str) -> str | None:
    """The call ``name`` with the (possibly truncated) JSON ``arguments``, rewritten."""
    return _salvage_json(f'{{"name": {json.dumps(name)}, "arguments": {arguments}')


def _decode_all(body: str) -> list[Any]:
    """Every JSON value in ``body``, separated by blanks, ``,`` or ``;``."""
    values: list[Any] = []
    pos = 0
    while True:
        while pos < len(body) and body[pos] in " \t\r\n,;":
            pos += 1
        if pos >= len(body):
            return values
        try:
            value, pos = _DECODER.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            raise _Problem(f"the JSON does not parse: {_json_where(exc, 0)}") from None
        except (RecursionError, ValueError):
            raise _Problem("the JSON is nested too deeply or too large") from None
        values.append(value)


def _strip_fence(body: str) -> str:
    body = body.strip()
    if body.startswith("```"):
        eol = body.find("\n")
        body = body[eol + 1 :] if eol != -1 else ""
        if body.rstrip().endswith("```"):
            body = body.rstrip()[:-3]
    return body.strip()


def _json_object(text: str, what: str) -> dict[str, Any]:
    """The JSON object of a call's arguments; a problem naming ``what`` otherwise."""
    body = _strip_fence(text)
    if not body:
        return {}
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise _Problem(f"{what} do not parse as JSON: {_json_where(exc, 0)}") from None
    except (RecursionError, ValueError):
        raise _Problem(f"{what} are nested too deeply or too large") from None
    if not isinstance(value, Mapping):
        raise _Problem(f"{what} must be a JSON object")
    return dict(value)


def _text_value(text: str) -> Any:
    """A value written as XML text: JSON objects and arrays are read, the rest stays text
    (and is read per the parameter's schema later)."""
    value = text.strip("\n")
    stripped = value.strip()
    if stripped[:1] in ("{", "[") and len(stripped) < _MAX_BLOCK:
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            return value
    return value


def _pythonic(body: str, scan: _Scan) -> list[tuple[str, dict[str, Any]]]:
    """``[f(a=1), g(b=2)]`` or ``f(a=1)``, read with :mod:`ast` (never evaluated)."""
    src = body if body.startswith("[") else f"[{body}]"
    try:
        tree = _ast_parse(src, scan)
    except _Problem:
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if body.startswith("[") or len(lines) < 2:
            raise
        src = "[" + ", ".join(lines) + "]"  # Olmo 3: one call per line
        tree = _ast_parse(src, scan)
    if not isinstance(tree.body, ast.List):
        raise _Problem("it is not a list of calls")
    calls = []
    for index, elt in enumerate(tree.body.elts, 1):
        if not isinstance(elt, ast.Call):
            raise _Problem(f"item {index} is not a call Name(key=value)")
        calls.append(_call_from_node(elt, src, lenient=False))
    return calls


def _request(name: str, args: Mapping[str, Any], fmt: RequestFormat) -> ApiRequest:
    return ApiRequest(name=name.strip(), arguments=dict(args), format=fmt)


class _Broken(_Problem):
    """A problem that still gives the call, rewritten for the feedback."""

    def __init__(self, reason: str, suggestion: str | None) -> None:
        super().__init__(reason)
        self.suggestion = suggestion


# ---------------------------------------------------------------- wrapper blocks

# (opening token, closing tokens, family label)
_WRAPPERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("<tool_call>", ("</tool_call>",), "a <tool_call> block (Qwen/Hermes)"),
    ("<|tool_call|>", (), "a Granite <|tool_call|> call"),
    ("[TOOL_CALLS]", ("</s>",), "a Mistral [TOOL_CALLS] call"),
    ("<|python_tag|>", ("<|eom_id|>", "<|eot_id|>"), "a Llama <|python_tag|> call"),
    ("<tool_calls>", ("</tool_calls>",), "a <tool_calls> block (MiniMax/Hunyuan/Jamba)"),
    ("<|action_start|><|plugin|>", ("<|action_end|>",), "an InternLM plugin call"),
    ("<|tool_call_start|>", ("<|tool_call_end|>",), "an LFM2 <|tool_call_start|> call"),
    ("<function_calls>", ("</function_calls>",), "a <function_calls> block"),
    ("<longcat_tool_call>", ("</longcat_tool_call>",), "a LongCat tool call"),
    ("<|python_start|>", ("<|python_end|>",), "a Llama 4 <|python_start|> call"),
)
_WRAPPER_OPEN = re.compile("|".join(re.escape(o).replace(r"><", r">\s*<") for o, _, _ in _WRAPPERS))
_MISTRAL_V11 = re.compile(rf"({_NAME})\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?\[ARGS\]")
_GLM4_NAME = re.compile(rf"({_NAME})\s*\n\s*(?=\{{)")
# Bodies of these shapes belong to another detector (which claims the whole span).
_DELEGATED = ("<function=", "<invoke", "<｜tool", "<|tool_call_begin|>", "<start_function_call>")


def _wrapper_label(opening: str) -> tuple[tuple[str, ...], str]:
    squashed = re.sub(r"\s+", "", opening)
    for o, closers, label in _WRAPPERS:
        if o == squashed:
            return closers, label
    return (), "a tool call"  # pragma: no cover - the regex only matches the table


_WRAPPER_HINTS = ("tool_call", "TOOL_CALLS", "python_", "plugin", "function_calls")


def _detect_wrappers(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if not any(hint in text for hint in _WRAPPER_HINTS):
        return
    opens = list(_WRAPPER_OPEN.finditer(text))
    for i, m in enumerate(opens):
        scan.tick("tool-call block")
        closers, label = _wrapper_label(m.group())
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        end = limit
        close_at = -1
        for closer in closers:
            found = text.find(closer, m.end(), limit)
            if found != -1 and (close_at == -1 or found < close_at):
                close_at, end = found, found + len(closer)
        body_end = close_at if close_at != -1 else limit
        body = text[m.end() : body_end]
        if any(d in body[:200] for d in _DELEGATED):
            continue
        if not body.strip():
            if close_at == -1 and i + 1 == len(opens):
                yield _Candidate(m.start(), end, "native", problem=f"{label} is empty")
            continue
        try:
            if body_end - m.end() > _MAX_BLOCK:
                raise _Problem(f"it is longer than {_MAX_BLOCK} characters")
            requests = _wrapper_requests(body, scan, truncated=close_at == -1)
        except _Broken as exc:
            yield _broken(m.start(), end, label, exc)
        except (_Problem, RequestFormatError) as exc:
            reason = exc.reason if isinstance(exc, _Problem) else str(exc)
            yield _Candidate(m.start(), end, "native", problem=f"looks like {label} but {reason}")
        else:
            yield _Candidate(m.start(), end, "native", requests=tuple(requests))


def _broken(
    start: int, end: int, label: str, exc: _Broken, fmt: RequestFormat = "native"
) -> _Candidate:
    candidate = _Candidate(start, end, fmt, problem=f"looks like {label} but {exc.reason}")
    candidate.suggestion = exc.suggestion
    return candidate


def _wrapper_requests(body: str, scan: _Scan, *, truncated: bool) -> list[ApiRequest]:
    body = _strip_fence(body)
    v11 = _MISTRAL_V11.match(body)
    if v11 is not None:
        return _mistral_v11(body)
    if "<arg_key>" in body:
        return [_glm_call(body)]
    glm4 = _GLM4_NAME.match(body)
    if glm4 is not None:  # GLM-4: the name on its own line, the arguments below
        args = _json_object(body[glm4.end() :], f"the arguments of {glm4.group(1)!r}")
        return [_request(glm4.group(1), args, "native")]
    if body[:1] in ("{", "["):
        try:
            values = _decode_all(body)
        except _Problem as exc:
            if body[:1] == "[" and re.match(r"\[\s*[A-Za-z_][\w.]*\s*\(", body):
                return [_request(n, a, "native") for n, a in _pythonic(body, scan)]
            reason = f"it is cut off ({exc.reason})" if truncated else exc.reason
            raise _Broken(reason, _salvage_json(body)) from None
        out: list[ApiRequest] = []
        for value in values:
            found = _requests_from_json(value)
            if not found:
                raise _Problem("the JSON inside is not a function call")
            out.extend(_as_native(r) for r in found)
        return out
    if re.match(r"[A-Za-z_][\w.]*\s*\(", body):
        return [_request(n, a, "native") for n, a in _pythonic(body, scan)]
    raise _Problem("there is no JSON or Python-style call inside")


def _glm_call(body: str) -> ApiRequest:
    """GLM-4.5: ``name<arg_key>k</arg_key><arg_value>v</arg_value>...``; each search stops
    at the next ``<arg_key>``, so a broken body is read in one pass."""
    pos = body.find("<arg_key>")
    name = body[:pos].strip()
    if not re.fullmatch(_NAME, name):
        raise _Problem("there is no function name before the first <arg_key>")
    args: dict[str, Any] = {}
    while pos != -1:
        nxt = body.find("<arg_key>", pos + 9)
        stop = nxt if nxt != -1 else len(body)
        key_end = body.find("</arg_key>", pos + 9, stop)
        value_start = body.find("<arg_value>", key_end, stop) if key_end != -1 else -1
        value_end = body.find("</arg_value>", value_start, stop) if value_start != -1 else -1
        if value_end == -1:
            reason = f"<arg_key> {len(args) + 1} of {name!r} has no complete <arg_value>"
            raise _Broken(reason, render_call(name, args, text_values=True))
        args[body[pos + 9 : key_end].strip()] = _text_value(body[value_start + 11 : value_end])
        pos = nxt
    return _request(name, args, "xml")


def _as_native(request: ApiRequest) -> ApiRequest:
    return ApiRequest(name=request.name, arguments=request.arguments, format="native")


def _mistral_v11(body: str) -> list[ApiRequest]:
    """``name[ARGS]{...}``, repeated for several calls (Mistral tokenizer v11+)."""
    out: list[ApiRequest] = []
    pos = 0
    while True:
        head = _MISTRAL_V11.match(body, pos)
        if head is None:
            raise _Problem(f"there is no name[ARGS] at character {pos}")
        name = head.group(1)
        try:
            args, pos = _DECODER.raw_decode(body, _skip(body, head.end()))
        except json.JSONDecodeError as exc:
            salvage = _salvage_named(name, body[head.end() :])
            raise _Broken(
                f"the arguments of {name!r} do not parse as JSON: {_json_where(exc, head.end())}",
                salvage,
            ) from None
        if not isinstance(args, Mapping):
            raise _Problem(f"the arguments of {name!r} must be a JSON object")
        out.append(_request(name, args, "native"))
        pos = _skip(body, pos)
        if body.startswith("[TOOL_CALLS]", pos):
            pos = _skip(body, pos + len("[TOOL_CALLS]"))
        if pos >= len(body):
            return out


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n,;":
        pos += 1
    return pos


# --------------------------------------------------- <function=name> and <invoke>

_FUNCTION_OPEN = re.compile(rf"<function=({_NAME})>")
_PARAM_EQ = re.compile(
    rf"<parameter=({_NAME})>(.*?)(?:</parameter>|(?=<parameter=|</function>)|\Z)", re.DOTALL
)
# MiniMax-M2 and the Anthropic prompt format write <invoke>; DeepSeek V3.2 prefixes the
# tags with ｜DSML｜ (and marks non-string values string="false"), Step3 with steptml:.
_NS = r"(?:｜DSML｜|steptml:)?"
_INVOKE_OPEN = re.compile(rf"<{_NS}invoke\s+name\s*=\s*[\"']({_NAME})[\"']\s*>")
_INVOKE_CLOSE = re.compile(rf"</{_NS}invoke>")
_PARAM_OPEN = re.compile(rf"<{_NS}parameter\b")
_PARAM_HEAD = re.compile(
    rf"<{_NS}parameter\s+name\s*=\s*[\"']({_NAME})[\"']"
    r"((?:\s+[\w-]{1,50}\s*=\s*\"[^\"]{0,50}\")*)\s*>"
)
_PARAM_CLOSE = re.compile(rf"</{_NS}parameter>")


def _invoke_params(body: str) -> tuple[dict[str, Any], bool]:
    """The ``<parameter>`` values of one ``<invoke>``, and whether every one is closed.
    A value never runs past the next ``<parameter``, so the scan is one pass."""
    heads = list(_PARAM_HEAD.finditer(body))
    args: dict[str, Any] = {}
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        close = _PARAM_CLOSE.search(body, head.end(), stop)
        if close is None:
            return args, False
        args[head.group(1)] = _param_value(body[head.end() : close.start()], head.group(2))
    return args, len(heads) == len(_PARAM_OPEN.findall(body))


def _detect_function_tags(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "<function=" not in text:
        return
    opens = list(_FUNCTION_OPEN.finditer(text))
    for i, m in enumerate(opens):
        scan.tick("<function=...> call")
        name = m.group(1)
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        close = text.find("</function>", m.end(), limit)
        body = text[m.end() : close if close != -1 else limit]
        end = close + len("</function>") if close != -1 else m.end() + len(body.rstrip())
        if "<parameter=" in body or not body.strip():
            label = "a Qwen3-Coder <function=...> call"
            params = _PARAM_EQ.findall(body)
            args = {k: _text_value(v) for k, v in params}
            if body.count("<parameter=") != len(args):
                yield _broken(
                    m.start(),
                    end,
                    label,
                    _Broken(f"a <parameter=...> of {name!r} is malformed", None),
                    "xml",
                )
                continue
            if close == -1 and body.count("</parameter>") < len(params):
                reason = f"the <parameter={params[-1][0]}> of {name!r} is cut off"
                yield _broken(
                    m.start(),
                    end,
                    label,
                    _Broken(reason, render_call(name, args, text_values=True)),
                    "xml",
                )
                continue
            yield _Candidate(m.start(), end, "xml", requests=(_request(name, args, "xml"),))
            continue
        label = "a Llama <function=...> call"
        try:
            args = _json_object(body, f"the arguments of {name!r}")
        except _Problem as exc:
            salvage = _salvage_named(name, body)
            yield _broken(m.start(), end, label, _Broken(exc.reason, salvage))
            continue
        yield _Candidate(m.start(), end, "native", requests=(_request(name, args, "native"),))


def _detect_invoke(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "invoke" not in text:
        return
    label = "an <invoke> call (MiniMax-M2 / DeepSeek V3.2 / XML function calls)"
    opens = list(_INVOKE_OPEN.finditer(text))
    for i, m in enumerate(opens):
        scan.tick("<invoke> call")
        name = m.group(1)
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        close = _INVOKE_CLOSE.search(text, m.end(), limit)
        body = text[m.end() : close.start() if close is not None else limit]
        end = close.end() if close is not None else m.end() + len(body.rstrip())
        if body.strip().startswith("{"):  # DeepSeek V3.2 may give the arguments as JSON
            try:
                args = _json_object(body, f"the arguments of {name!r}")
            except _Problem as exc:
                yield _broken(
                    m.start(), end, label, _Broken(exc.reason, _salvage_named(name, body))
                )
                continue
            yield _Candidate(m.start(), end, "native", requests=(_request(name, args, "native"),))
            continue
        args, complete = _invoke_params(body)
        if not complete or close is None:
            reason = (
                f"<parameter> {len(args) + 1} of {name!r} is cut off or malformed"
                if not complete
                else f"the <invoke> of {name!r} is never closed"
            )
            suggestion = render_call(name, args, text_values=True)
            yield _broken(m.start(), end, label, _Broken(reason, suggestion), "xml")
            continue
        yield _Candidate(m.start(), end, "xml", requests=(_request(name, args, "xml"),))


def _param_value(text: str, extra: str) -> Any:
    """A <parameter> value; DeepSeek V3.2's ``string="false"`` marks a JSON value."""
    if re.search(r"string\s*=\s*\"false\"", extra):
        try:
            return json.loads(text.strip())
        except (ValueError, RecursionError):
            return _text_value(text)
    return _text_value(text)
