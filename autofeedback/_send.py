"""Send: turn a checked request into an HTTP request, only to allowed hosts, and keep
credentials out of everything that is logged.

Function-style operations (OpenAI tools, API-Bank) are served as ``POST /{name}`` with a
JSON body (see :func:`autofeedback._openapi.function_path`), like the sandbox serves them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import requests

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import HostNotAllowed
from autofeedback._model import ApiRequest, Operation
from autofeedback._openapi import function_path

__all__ = ["SENSITIVE", "HttpCall", "allowed_hosts", "build_http", "redact", "send"]

#: Header and query names whose values are credentials, whatever the spec says.
SENSITIVE = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "apikey",
        "api_key",
        "x-auth-token",
        "x-access-token",
        "access_token",
        "token",
        "key",
        "secret",
        "client_secret",
        "password",
        "x-rapidapi-key",
        "session",
        "x-session",
    }
)
REDACTED = "[REDACTED]"
_MAX_BODY = 2 * 1024 * 1024


@dataclass(frozen=True)
class HttpCall:
    """The HTTP form of a request: what is sent (and, redacted, what is logged)."""

    method: str
    url: str
    headers: Mapping[str, str]
    json: Any = None

    def redacted(self, extra: Iterable[str] = ()) -> dict[str, Any]:
        """This call as a JSON-able dict with every credential replaced."""
        names = SENSITIVE | {n.lower() for n in extra}
        return {
            "method": self.method,
            "url": redact_url(self.url, names),
            "headers": redact(self.headers, names),
            "json": self.json,
        }


def redact(
    headers: Mapping[str, str], names: frozenset[str] | set[str] = SENSITIVE
) -> dict[str, str]:
    """``headers`` with credential values replaced.

    >>> redact({"Authorization": "Bearer abc", "Accept": "json"})
    {'Authorization': '[REDACTED]', 'Accept': 'json'}
    """
    return {k: (REDACTED if k.lower() in names else v) for k, v in headers.items()}


def redact_url(url: str, names: frozenset[str] | set[str] = SENSITIVE) -> str:
    """``url`` with credential query values and userinfo replaced."""
    parts = urlsplit(url)
    query = [
        (k, REDACTED if k.lower() in names else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if "@" in parts.netloc:
        netloc = f"{REDACTED}@{netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="[]"), ""))


def allowed_hosts(
    catalog: ApiCatalog, base_url: str | None, extra: Iterable[str] = ()
) -> frozenset[str]:
    """The spec's servers, the user's base URL and an explicit allowlist."""
    hosts = set(catalog.hosts) | {h.lower() for h in extra}
    if base_url:
        netloc = urlsplit(base_url).netloc.lower()
        hosts |= {netloc, netloc.split(":")[0]}
    return frozenset(hosts)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


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
        return HttpCall(request.method.upper(), url, out_headers, request.body)
    args = dict(request.arguments)
    if not op.is_http:
        return HttpCall("POST", base + function_path(op.name), out_headers, args)
    assert op.path is not None and op.method is not None
    path = op.path
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    for k, v in args.items():
        p = op.parameter(k)
        location = p.location if p is not None else ("body" if op.body_schema else "query")
        if location == "path":
            path = path.replace("{" + k + "}", quote(_text(v), safe=""))
        elif location == "header":
            out_headers[k] = _text(v)
        elif location == "body":
            body[k] = v
        else:
            query[k] = [_text(x) for x in v] if isinstance(v, list) else _text(v)
    url = base + path + (f"?{urlencode(query, doseq=True)}" if query else "")
    return HttpCall(op.method, url, out_headers, body if (body or op.body_required) else None)


def _strip_base(path: str, base: str) -> str:
    prefix = urlsplit(base).path.rstrip("/")
    return path[len(prefix) :] if prefix and path.startswith(prefix + "/") else path


def send(
    call: HttpCall,
    *,
    allowed: frozenset[str],
    session: requests.Session | None = None,
    timeout: float = 10.0,
) -> requests.Response:
    """Send ``call`` if its host is allowed; raise :class:`HostNotAllowed` otherwise."""
    netloc = urlsplit(call.url).netloc.lower()
    host = netloc.rsplit("@", 1)[-1]
    if host not in allowed and host.split(":")[0] not in allowed:
        raise HostNotAllowed(host, sorted(allowed))
    s = session or requests.Session()
    return s.request(
        call.method,
        call.url,
        headers=dict(call.headers),
        json=call.json,
        timeout=timeout,
        allow_redirects=False,
    )


def body_excerpt(response: requests.Response, limit: int = 500) -> str:
    """The start of a response body as text, never more than ``limit`` characters."""
    raw = response.content[:_MAX_BODY]
    text = raw.decode(response.encoding or "utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "..."
