"""Export any :class:`ApiCatalog` as an OpenAPI 3.1 document.

HTTP operations keep their path, method, parameters, JSON request body and responses.
Function-style operations (OpenAI tools, BFCL, API-Bank: ``method is None``) become
``POST /{name}`` whose required JSON object body holds their arguments, so that one
HTTP server (:mod:`autofeedback.serve._sandbox`) and one validator (openapi-core) serve
every spec format.

Schemas are copied through a sanitizer, because loaded specs carry what real specs
carry: BFCL type names (``dict``, ``float``), OpenAPI 3.0 leftovers (``nullable``,
boolean ``exclusiveMinimum``), unresolved ``$ref``, recursive schemas, invalid regexes.
The result always passes openapi-core's spec check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import IO, Any
from urllib.parse import quote

import yaml

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._schema import _json_safe, _object_schema, _parameter, sanitize_schema
from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._model import Operation, Parameter, Response

__all__ = ["function_path", "run_openapi_export", "to_openapi"]

_DEFAULT_SERVER = "http://127.0.0.1"
_TEMPLATE_VAR = re.compile(r"\{([^{}/]+)\}")
_STATUS = re.compile(r"^(?:[1-5](?:\d\d|XX)|default)$")


def function_path(name: str) -> str:
    """The route a function-style operation is served at: ``POST`` to this path.

    Every character outside RFC 3986's unreserved set is percent-encoded, so names
    with dots, slashes or spaces map to one path segment.

    >>> function_path("math.factorial")
    '/math.factorial'
    >>> function_path("get weather/now")
    '/get%20weather%2Fnow'
    """
    return "/" + quote(name, safe="")


def to_openapi(catalog: ApiCatalog) -> dict[str, Any]:
    """An OpenAPI 3.1 document describing every operation of ``catalog``.

    >>> catalog = ApiCatalog([Operation("ping", parameters=(
    ...     Parameter("host", "argument", {"type": "string"}, required=True),))])
    >>> doc = to_openapi(catalog)
    >>> doc["paths"]["/ping"]["post"]["requestBody"]["content"]["application/json"][
    ...     "schema"]["required"]
    ['host']
    """
    return _export(catalog).document


def run_openapi_export(
    spec: str | PathLike[str], *, stdout: IO[str], stderr: IO[str], as_yaml: bool = False
) -> int:
    """Print the OpenAPI 3.1 export of any spec file (JSON, or YAML with ``as_yaml``).

    Returns 0, or 2 when the spec cannot be loaded.

    >>> run_openapi_export("specs/examples/bookshop.yaml", stdout=sys.stdout,
    ...                    stderr=sys.stderr)  # doctest: +SKIP
    """
    try:
        catalog = ApiCatalog.from_file(spec)
    except AutoFeedbackError as exc:
        stderr.write(f"error: {exc}\n")
        return 2
    document = to_openapi(catalog)
    if as_yaml:
        stdout.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    else:
        stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return 0


@dataclass(frozen=True)
class _Export:
    """The document plus the operation behind each ``(path, method)`` route."""

    document: dict[str, Any]
    routes: dict[tuple[str, str], Operation]


def _export(catalog: ApiCatalog) -> _Export:
    paths: dict[str, dict[str, Any]] = {}
    routes: dict[tuple[str, str], Operation] = {}
    used_ids: set[str] = set()
    for op in catalog.operations:
        if op.is_http:
            assert op.method is not None and op.path is not None
            path = _clean_path(op.path)
            method = op.method.lower()
            if method not in {"get", "put", "post", "delete", "options", "head", "patch", "trace"}:
                continue
            item = _http_operation(op, path)
        else:
            path = function_path(op.name)
            method = "post"
            item = _function_operation(op)
        if method in paths.get(path, {}):
            continue  # two operations on one route: the first wins, as in ApiCatalog
        item["operationId"] = _unique_id(op.name, used_ids)
        paths.setdefault(path, {})[method] = item
        routes[(path, method)] = op
    servers = [{"url": s} for s in catalog.servers if _is_server_url(s)]
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": f"autofeedback export of {catalog.source}", "version": "1.0"},
        "servers": servers or [{"url": _DEFAULT_SERVER}],
        "paths": paths,
    }
    return _Export(document, routes)


def _is_server_url(url: str) -> bool:
    return bool(url) and not any(c.isspace() for c in url)


def _unique_id(name: str, used: set[str]) -> str:
    candidate = name or "operation"
    n = 1
    while candidate in used:
        n += 1
        candidate = f"{name}_{n}"
    used.add(candidate)
    return candidate


def _clean_path(path: str) -> str:
    """A path template OpenAPI accepts: leading slash, no query string or fragment."""
    path = path.split("?", 1)[0].split("#", 1)[0].strip() or "/"
    if not path.startswith("/"):
        path = "/" + path
    return path


def _http_operation(op: Operation, path: str) -> dict[str, Any]:
    template_vars = _TEMPLATE_VAR.findall(path)
    params: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    body_params: list[Parameter] = []
    for p in op.parameters:
        if p.location in ("body", "argument"):
            body_params.append(p)
            continue
        location: str = p.location
        required = p.required
        if location == "path" and p.name not in template_vars:
            # a path parameter the template does not hold cannot travel in the path
            location, required = "query", False
        if (p.name, location) in seen:
            continue
        seen.add((p.name, location))
        params.append(_parameter(p, location, required or location == "path"))
    for var in template_vars:
        if (var, "path") not in seen:
            seen.add((var, "path"))
            params.append(
                {"name": var, "in": "path", "required": True, "schema": {"type": "string"}}
            )
    out: dict[str, Any] = {}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = [str(t) for t in op.tags]
    if params:
        out["parameters"] = params
    body_schema: Mapping[str, Any] | None = op.body_schema
    if body_schema is None and body_params:
        body_schema = _object_schema(body_params, closed=False)
    if body_schema is not None:
        media = request_media(op)
        content: dict[str, Any] = {"schema": sanitize_schema(body_schema)}
        if media == "multipart/form-data":
            content = _multipart(content["schema"])
        out["requestBody"] = {"required": bool(op.body_required), "content": {media: content}}
    out["responses"] = _responses(op.responses)
    return out


#: the body media kept as they are (any other body is written as JSON)
_FORM_MEDIA = frozenset({"multipart/form-data", "application/x-www-form-urlencoded"})


def request_media(op: Operation) -> str:
    """The media type :func:`to_openapi` writes ``op``'s request body in: a form or an
    upload stays one (its fields travel as the spec says), any other body is JSON.

    >>> request_media(Operation("up", "POST", "/f", body_media="multipart/form-data; x=1"))
    'multipart/form-data'
    """
    media = (op.body_media or "").split(";")[0].strip().lower()
    return media if media in _FORM_MEDIA else "application/json"


def _multipart(schema: dict[str, Any]) -> dict[str, Any]:
    """A multipart body's media type: each file field (``format: binary``, alone or as a
    list's items) takes any content (a file part is bytes, which the 3.1 document this
    writes would check as a ``string`` and refuse), and each number or boolean field is
    read from its text as JSON (``"2"`` is 2), as a server reads a form; OpenAPI's own
    default for such a part is ``text/plain``, a string.

    >>> m = _multipart({"type": "object", "properties": {"f": {"type": "string",
    ...     "format": "binary"}, "n": {"type": "integer"}, "s": {"type": "string"}}})
    >>> m["schema"]["properties"]["f"], m["encoding"]
    ({}, {'n': {'contentType': 'application/json'}})
    """
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {"schema": schema}

    def plain(s: Any) -> Any:
        if isinstance(s, dict) and s.get("format") == "binary":
            return {}
        if isinstance(s, dict) and isinstance(s.get("items"), dict):
            return {**s, "items": plain(s["items"])}
        return s

    def typed(s: Any) -> bool:
        kind = s.get("type") if isinstance(s, dict) else None
        kinds = set(kind) if isinstance(kind, list) else {kind}
        return bool(kinds & {"integer", "number", "boolean"})

    out: dict[str, Any] = {
        "schema": {**schema, "properties": {k: plain(v) for k, v in props.items()}}
    }
    encoding = {k: {"contentType": "application/json"} for k, v in props.items() if typed(v)}
    if encoding:
        out["encoding"] = encoding
    return out


def _function_operation(op: Operation) -> dict[str, Any]:
    args = [p for p in op.parameters if p.location in ("argument", "body")]
    out: dict[str, Any] = {}
    if op.description:
        out["description"] = op.description
    if op.tags:
        out["tags"] = [str(t) for t in op.tags]
    # a function takes exactly its documented arguments: unknown ones are errors
    schema = sanitize_schema(op.body_schema) if op.body_schema else _object_schema(args, True)
    out["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    out["responses"] = _responses(op.responses)
    return out


def _responses(responses: Iterable[Response]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in responses:
        status = str(r.status).strip().upper()
        status = "default" if status == "DEFAULT" else status
        if not _STATUS.match(status) or status in out:
            continue
        item: dict[str, Any] = {"description": r.description or ""}
        if r.schema is not None or r.example is not None:
            media: dict[str, Any] = {"schema": sanitize_schema(r.schema or {})}
            if r.example is not None and _json_safe(r.example):
                media["example"] = r.example
            item["content"] = {"application/json": media}
        out[status] = item
    if not any(s.startswith("2") for s in out):
        out["200"] = {"description": "Success"}
    return out
