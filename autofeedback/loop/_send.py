"""Send: turn a checked request into an HTTP request, only to allowed hosts, and keep
credentials out of everything that is logged.

Function-style operations (OpenAI tools, API-Bank) are served as ``POST /{name}`` with a
JSON body (see :func:`autofeedback.catalog._openapi.function_path`), like the sandbox serves them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import requests

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._openapi import function_path, request_media
from autofeedback.checks._check_values import deserialize
from autofeedback.core._exceptions import FileNotRead, HostNotAllowed
from autofeedback.core._model import ApiRequest, Operation, Parameter
from autofeedback.core._origins import Origins, shown_origin
from autofeedback.core._redact import REDACTED, SENSITIVE, redact
from autofeedback.core._resolve import content_type

__all__ = [
    "MAX_RESPONSE_BYTES",
    "REDACTED",
    "SENSITIVE",
    "HttpCall",
    "allowed_hosts",
    "build_http",
    "redact",
    "redact_url",
    "send",
]

#: Responses are read as a stream and cut here: a server cannot make the loop hold more.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class HttpCall:
    """The HTTP form of a request: what is sent (and, redacted, what is logged)."""

    method: str
    url: str
    headers: Mapping[str, str]
    json: Any = None
    #: how the body travels: JSON, a form or an upload's parts (the operation's documented
    #: media type); a text or bytes body goes as written, under its own Content-Type
    media: str = "application/json"
    #: the upload parts whose content is a local file not read here
    #: (:attr:`~autofeedback.core._model.ApiRequest.unread_files`): never sent
    unread_files: tuple[str, ...] = ()

    def redacted(self, extra: Iterable[str] = ()) -> dict[str, Any]:
        """This call as a JSON-able dict with every credential replaced.

        >>> call = HttpCall("GET", "http://h/x?api_key=k123", {"Authorization": "Bearer t0k"})
        >>> call.redacted()["url"], call.redacted()["headers"]
        ('http://h/x?api_key=[REDACTED]', {'Authorization': '[REDACTED]'})
        """
        names = list(extra)
        secrets = [v for k, v in self.headers.items() if k.lower() in SENSITIVE]
        return {
            "method": self.method,
            "url": redact_url(self.url, names),
            "headers": redact(dict(self.headers), names=names),
            "json": redact(self.json, names=names, secrets=secrets),
        }


def redact_url(url: str, names: Iterable[str] = ()) -> str:
    """``url`` with credential query values and user info replaced.

    >>> redact_url("https://bob:pw@h/x?api_key=K&q=1")
    'https://REDACTED@h/x?api_key=[REDACTED]&q=1'
    """
    return str(redact(url, names=names))


def allowed_hosts(catalog: ApiCatalog, base_url: str | None, extra: Iterable[str] = ()) -> Origins:
    """The origins a request may go to: the spec's servers, the user's base URL and an
    explicit allowlist (origins, or bare host names meaning any port; see
    :mod:`autofeedback.core._origins`)."""
    servers = [*catalog.servers, *([base_url] if base_url else [])]
    return Origins.of(servers, extra=extra)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


#: the characters RFC 6265 lets a cookie value hold as written (its ``cookie-octet``s)
_COOKIE_SAFE = "!#$%&'()*+-./:<=>?@[]^_`{|}~"


def _typed(value: Any, param: Parameter | None) -> Any:
    return deserialize(value, param.schema, param) if param is not None else value


def build_http(
    request: ApiRequest, op: Operation, base_url: str, headers: Mapping[str, str] | None = None
) -> HttpCall:
    """The HTTP call for ``request`` targeting ``op`` on ``base_url``."""
    base = base_url.rstrip("/")
    out_headers = dict(headers or {})
    if request.is_http:
        assert request.method is not None and request.url is not None
        parts = urlsplit(request.url)
        query_text = parts.query
        if request.params:
            extra = urlencode(
                {k: v if isinstance(v, list) else _text(v) for k, v in request.params.items()},
                doseq=True,
            )
            query_text = f"{query_text}&{extra}" if query_text else extra
        # only the path and query of the model's URL are kept: the host is ours to choose
        path = parts.path if not base or not urlsplit(base).path else _strip_base(parts.path, base)
        url = base + path + (f"?{query_text}" if query_text else "")
        out_headers.update({str(k): str(v) for k, v in request.headers.items()})
        # fields go as the request's own Content-Type says, else as the docs do
        given = content_type(out_headers)
        media = given.split(";")[0].strip().lower() or request_media(op)
        return HttpCall(
            request.method.upper(),
            url,
            out_headers,
            request.body,
            media=media,
            unread_files=request.unread_files,
        )
    args = dict(request.arguments)
    if request.format == "xml":  # XML tool calls carry text: send the documented types
        args = {k: _typed(v, op.parameter(k)) for k, v in args.items()}
    if not op.is_http:
        return HttpCall("POST", base + function_path(op.name), out_headers, args)
    assert op.path is not None and op.method is not None
    path = op.path
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    cookies: list[str] = []
    for k, v in args.items():
        p = op.parameter(k)
        location = p.location if p is not None else ("body" if op.body_schema else "query")
        if location == "path":
            path = path.replace("{" + k + "}", quote(_text(v), safe=""))
        elif location == "header":
            out_headers[k] = _text(v)
        elif location == "cookie":
            # a cookie travels in the Cookie header, never in the URL; what a cookie
            # value cannot hold as written (``;``, ``,``, spaces, quotes) is %-encoded
            cookies.append(f"{k}={quote(_text(v), safe=_COOKIE_SAFE)}")
        elif location == "body":
            body[k] = v
        else:
            query[k] = [_text(x) for x in v] if isinstance(v, list) else _text(v)
    if cookies:
        jar = out_headers.get("Cookie")
        out_headers["Cookie"] = "; ".join([jar, *cookies] if jar else cookies)
    url = base + path + (f"?{urlencode(query, doseq=True)}" if query else "")
    sent = body if (body or op.body_required) else None
    return HttpCall(op.method, url, out_headers, sent, media=request_media(op))


def _body(call: HttpCall) -> dict[str, Any]:
    """``requests``' keyword for ``call``'s body: a text or bytes body as written, a form's
    or an upload's fields as their text (``true``, ``3``, JSON for an object), else JSON.

    >>> _body(HttpCall("POST", "/c", {}, {"amount": 5, "capture": True},
    ...             media="application/x-www-form-urlencoded"))
    {'data': {'amount': '5', 'capture': 'true'}}
    """
    body = call.json
    if isinstance(body, (str, bytes)):
        return {"data": body}
    if not isinstance(body, Mapping) or call.media == "application/json":
        return {"json": body}
    fields = {str(k): _text(v) for k, v in body.items()}
    if call.media == "multipart/form-data":
        return {"files": {k: (None, v) for k, v in fields.items()}}
    return {"data": fields}


def _strip_base(path: str, base: str) -> str:
    prefix = urlsplit(base).path.rstrip("/")
    return path[len(prefix) :] if prefix and path.startswith(prefix + "/") else path


def send(
    call: HttpCall,
    *,
    allowed: Origins,
    session: requests.Session | None = None,
    timeout: float = 10.0,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> requests.Response:
    """Send ``call`` if its origin is allowed; raise :class:`HostNotAllowed` otherwise,
    and :class:`FileNotRead` for an upload of a local file (an empty part is not it).

    Redirects are not followed (a redirect is the answer), and the body is read as a
    stream and cut at ``max_bytes``: ``response.content`` holds at most that much."""
    if not allowed.allows(call.url):
        raise HostNotAllowed(shown_origin(call.url), list(allowed))
    if call.unread_files:
        raise FileNotRead(call.unread_files)
    s = session or requests.Session()
    response = s.request(
        call.method,
        call.url,
        headers=dict(call.headers),
        timeout=timeout,
        allow_redirects=False,
        stream=True,
        **_body(call),
    )
    try:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(64 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                break
    finally:
        response.close()
    # what the caller reads (.content, .text, .json()) is the capped body; requests
    # keeps it in this attribute once read, so the stream is never touched again
    response._content = b"".join(chunks)[:max_bytes]
    return response


def body_excerpt(response: requests.Response, limit: int = 500) -> str:
    """The start of a response body as text, never more than ``limit`` characters."""
    raw = response.content[:MAX_RESPONSE_BYTES]
    text = raw.decode(response.encoding or "utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."
