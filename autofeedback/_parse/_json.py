"""JSON function calls: ``{"name", "arguments"}`` and its variants, OpenAI ``tool_calls``,
and the ReAct text form ``Action:`` / ``Action Input:``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

from autofeedback._parse._common import (
    _DECODER,
    _HTTP_METHODS,
    _LINE_SPACE,
    RequestFormatError,
    _at_line_start,
    _Candidate,
    _dump,
    _json_loads,
    _Problem,
    _Scan,
    _skip_space,
    _type_name,
)
from autofeedback._parse._http import (
    _http_from_line,
    _url_problem,
)
from autofeedback._parse._providers import RawToolCall, find_tool_calls, shape_format
from autofeedback.core._model import ApiRequest, RequestFormat

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
    return _decoded_arguments(value, name)[0]


def _decoded_arguments(value: Any, name: str) -> tuple[dict[str, Any], bool]:
    """The arguments as an object, and whether they came encoded twice: a JSON string
    whose text is the JSON object (the most reported tool-call defect of open models),
    read here so that the checks can say so (E4.1) and the call can still be judged."""
    twice = False
    if value is None:
        return {}, False
    if isinstance(value, str):
        if not value.strip():
            return {}, False
        try:
            value = _json_loads(value)
        except _Problem as exc:
            raise RequestFormatError(
                f"the arguments of {name!r} are not valid JSON: {exc.reason}"
            ) from None
        if isinstance(value, str) and value.strip()[:1] == "{":
            try:
                inner = _json_loads(value)
            except _Problem:
                inner = None
            if isinstance(inner, Mapping):
                value, twice = inner, True
    if not isinstance(value, Mapping):
        raise RequestFormatError(
            f"the arguments of {name!r} must be a JSON object, got {_type_name(value)}"
        )
    return dict(value), twice


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
    arguments, twice = _decoded_arguments(call[arg_key] if arg_key is not None else None, name)
    return ApiRequest(
        name=name, arguments=arguments, format=fmt, raw=_dump(call), double_encoded=twice
    )


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
    bad_url = _url_problem(url.strip())
    if bad_url is not None:
        raise RequestFormatError(bad_url)
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
    headers = {str(k): str(v) for k, v in headers.items()}
    cookies: Any = record.get("cookies")
    if isinstance(cookies, Mapping) and cookies:
        # requests' ``cookies=``: sent in the Cookie header, after any written there
        pairs = [f"{k}={v}" for k, v in cookies.items()]
        given = next((k for k in headers if k.lower() == "cookie"), "Cookie")
        headers[given] = "; ".join([headers[given], *pairs] if given in headers else pairs)
    elif cookies is not None and not isinstance(cookies, Mapping):
        raise RequestFormatError(f"'cookies' must be an object, got {_type_name(cookies)}")
    body = None
    for key in ("json", "data", "body"):
        if record.get(key) is not None:
            body = record[key]
            break
    return ApiRequest(
        method=method,
        url=url.strip(),
        params=dict(params),
        headers=headers,
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
                out.append(_openai_chat(call))
            except RequestFormatError as exc:
                where = f"tool call {index}: " if len(calls) > 1 else ""
                raise RequestFormatError(f"{where}{exc}") from None
        return out
    provider = find_tool_calls(value)
    if provider is not None:
        out = []
        for index, raw_call in enumerate(provider, 1):
            try:
                out.append(request_from_tool_call(raw_call))
            except RequestFormatError as exc:
                where = f"tool call {index}: " if len(provider) > 1 else ""
                raise RequestFormatError(f"{where}{exc}") from None
        return out or None
    function = value.get("function")
    if isinstance(function, Mapping):
        if _looks_like_schema(function.get("parameters")):
            return None  # a tool definition, not a call
        return [_openai_chat(value)]
    if _call_shape(value) is not None:
        return [_call_from_mapping(value, "json")]
    if "url" in value and "method" in value:
        return [_http_from_record(value, "request")]
    return None


def _openai_chat(call: Any) -> ApiRequest:
    request = _call_from_mapping(call, "openai")
    call_id = call.get("id") if isinstance(call, Mapping) else None
    return replace(
        request,
        shape="openai-chat",
        call_id=call_id if isinstance(call_id, str) and call_id else None,
    )


def request_from_tool_call(call: RawToolCall) -> ApiRequest:
    """One provider tool call (found by :func:`find_tool_calls`) as a request that keeps
    its shape and id; :class:`RequestFormatError` when it names no function or its
    arguments are not a JSON object."""
    name = call.name
    if not isinstance(name, str) or not name.strip():
        raise RequestFormatError(f"the {call.shape} tool call names no function")
    arguments, twice = _decoded_arguments(call.arguments, name.strip())
    return ApiRequest(
        name=name.strip(),
        arguments=arguments,
        format=shape_format(call.shape),
        raw=_dump(call.block),
        shape=call.shape,
        call_id=call.call_id,
        double_encoded=twice,
    )


def _message_calls(message: Mapping[str, Any]) -> list[Any]:
    if isinstance(message.get("tool_calls"), list):
        return list(message["tool_calls"])
    if isinstance(message.get("function_call"), Mapping):
        return [message["function_call"]]
    return []


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
            seen = text[start:end]
            fmt = "openai" if "tool_call" in seen or "function_call" in seen else "json"
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
