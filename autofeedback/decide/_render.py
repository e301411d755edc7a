"""A repaired call written back in the shape it came in.

The model's text keeps everything around the call (its prose, its wrapper tags) and the
call's own format: a Python call stays a Python call (``<API>...</API>``, API-Bank's
``API-Request: [...]``), a JSON call keeps its key names and an arguments string stays a
string, an HTTP line keeps its method, a RestGPT ``Input`` keeps its fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from autofeedback.core._model import ApiRequest

__all__ = ["python_call", "rewrite_output", "rewrite_raw"]

#: the most '{' positions tried when looking for the JSON object of a call in its text
_MAX_TRIES = 200


def python_call(name: str, arguments: Mapping[str, Any]) -> str:
    """``name(k=v, ...)`` with Python literals (``repr``) for the values.

    >>> python_call("getBook", {"bookId": 7, "lang": "en"})
    "getBook(bookId=7, lang='en')"
    """
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


def rewrite_output(text: str, pairs: list[tuple[ApiRequest, ApiRequest]]) -> str | None:
    """``text`` with each original request of ``pairs`` replaced by its repaired one, in
    the original's format; ``None`` when one of them cannot be found or written back.

    >>> a = ApiRequest(name="get_weather", arguments={"City": "Paris"}, format="api-tag",
    ...     raw="<API>get_weather(City='Paris')</API>")
    >>> b = ApiRequest(name="get_weather", arguments={"city": "Paris"})
    >>> rewrite_output("Sure: <API>get_weather(City='Paris')</API>", [(a, b)])
    "Sure: <API>get_weather(city='Paris')</API>"
    """
    out = text
    at = 0
    for original, repaired in pairs:
        if original == repaired:
            continue
        raw = original.raw
        where = out.find(raw, at) if raw else -1
        if where < 0:
            return None
        new = rewrite_raw(raw, original, repaired)
        if new is None:
            return None
        out = out[:where] + new + out[where + len(raw) :]
        at = where + len(new)
    return out


def rewrite_raw(raw: str, original: ApiRequest, repaired: ApiRequest) -> str | None:
    """The text ``raw`` of ``original`` written for ``repaired`` in the same format, or
    ``None`` where the format cannot be written back faithfully."""
    if original.is_http or repaired.is_http:
        return _http(raw, original, repaired)
    name, new_name = original.name or "", repaired.name or ""
    span = _call_span(raw, name)
    if span is not None:
        start, end = span
        return raw[:start] + python_call(new_name, repaired.arguments) + raw[end:]
    return _json_call(raw, original, repaired)


def _call_span(raw: str, name: str) -> tuple[int, int] | None:
    """Where ``name(...)`` is written in ``raw`` (the closing parenthesis found past
    quoted strings), or ``None``."""
    if not name:
        return None
    m = re.search(rf"(?<![\w.-]){re.escape(name)}\s*\(", raw)
    if m is None:
        return None
    depth, quote, i = 0, "", m.end() - 1
    while i < len(raw):
        c = raw[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return m.start(), i + 1
        i += 1
    return None


def _objects(raw: str) -> Iterator[tuple[int, int, Any]]:
    """The JSON values that start with ``{`` in ``raw``: (start, end, value)."""
    decoder = json.JSONDecoder()
    tries = 0
    for m in re.finditer(r"\{", raw):
        tries += 1
        if tries > _MAX_TRIES:
            return
        try:
            value, end = decoder.raw_decode(raw, m.start())
        except (ValueError, RecursionError):
            continue
        yield m.start(), end, value


def _json_call(raw: str, original: ApiRequest, repaired: ApiRequest) -> str | None:
    """A JSON call (``{"name": ..., "arguments": ...}`` under any key names, arguments an
    object or a JSON string), or a call whose arguments are a JSON object in ``raw``."""
    args = dict(original.arguments)
    for start, end, value in _objects(raw):
        if not isinstance(value, dict):
            continue
        written = _rewrite_call_object(value, original, repaired)
        if written is not None:
            return raw[:start] + json.dumps(written, ensure_ascii=False) + raw[end:]
        if value == args:
            out = raw[:start] + json.dumps(dict(repaired.arguments), ensure_ascii=False)
            out += raw[end:]
            if original.name != repaired.name:
                out, n = _rename_token(out, original.name or "", repaired.name or "")
                if n == 0:
                    return None
            return out
    return None


def _rename_token(text: str, old: str, new: str) -> tuple[str, int]:
    if not old:
        return text, 0
    pattern = rf"(?<![\w.-]){re.escape(old)}(?![\w-])"
    return re.subn(pattern, new.replace("\\", "\\\\"), text, count=1)


def _rewrite_call_object(
    value: dict[str, Any], original: ApiRequest, repaired: ApiRequest
) -> dict[str, Any] | None:
    """``value`` with its name and arguments replaced, when it is the call: it holds the
    name under some key and the arguments (an object or its JSON text) under another;
    searched one level down too (``{"function": {"name", "arguments"}}``)."""
    name_key = next((k for k, v in value.items() if v == original.name), None)
    args_key = None
    as_text = False
    for k, v in value.items():
        if k == name_key:
            continue
        if isinstance(v, dict) and v == dict(original.arguments):
            args_key = k
        elif isinstance(v, str) and v.strip()[:1] in '{"':
            try:
                decoded = json.loads(v)
                if isinstance(decoded, str) and original.double_encoded:
                    decoded = json.loads(decoded)  # written once, as it should be
            except (ValueError, RecursionError):
                continue
            if decoded == dict(original.arguments):
                args_key, as_text = k, True
    if name_key is not None and (args_key is not None or not original.arguments):
        out = dict(value)
        out[name_key] = repaired.name
        if args_key is not None:
            new_args = dict(repaired.arguments)
            out[args_key] = json.dumps(new_args, ensure_ascii=False) if as_text else new_args
        elif repaired.arguments:
            return None
        return out
    for k, v in value.items():
        if isinstance(v, dict):
            inner = _rewrite_call_object(v, original, repaired)
            if inner is not None:
                return {**value, k: inner}
        if isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, dict):
                    inner = _rewrite_call_object(item, original, repaired)
                    if inner is not None:
                        return {**value, k: [*v[:i], inner, *v[i + 1 :]]}
    return None


def _http(raw: str, original: ApiRequest, repaired: ApiRequest) -> str | None:
    if not (original.is_http and repaired.is_http):
        return None
    assert original.url is not None and repaired.url is not None
    out = raw
    if original.format == "restgpt":
        for start, end, value in _objects(out):
            if isinstance(value, dict) and "url" in value:
                new = dict(value)
                new["url"] = _same_base(value["url"], repaired.url)
                if "params" in value or repaired.params:
                    new["params"] = dict(repaired.params)
                if "data" in value or repaired.body is not None:
                    new["data"] = repaired.body
                return out[:start] + json.dumps(new, ensure_ascii=False) + out[end:]
        return None
    if original.url != repaired.url:
        if original.url not in out:
            return None
        out = out.replace(original.url, repaired.url, 1)
    if original.params != repaired.params or original.body != repaired.body:
        return None  # a query or body outside the URL line: not written back here
    return out


def _same_base(old: Any, new_url: str) -> str:
    """The repaired URL written as the old one was (absolute or relative)."""
    if isinstance(old, str) and not urlsplit(old).netloc:
        parts = urlsplit(new_url)
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return new_url
