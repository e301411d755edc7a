"""What the sandbox (:mod:`autofeedback.serve._sandbox`) reads a request as and answers an
invalid one with: the default error codes, the record of a request seen, the routes
compiled from the spec's templates, the request as openapi-core reads it, and each
validation error explained with its kind and the code the spec documents for it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import re2  # type: ignore[import-untyped]
from openapi_core.casting.schemas.exceptions import CastError
from openapi_core.datatypes import RequestParameters
from openapi_core.deserializing.exceptions import DeserializeError
from openapi_core.templating.media_types.exceptions import MediaTypeNotFound
from openapi_core.templating.paths.exceptions import OperationNotFound, PathError
from openapi_core.validation.request.exceptions import (
    MissingRequestBodyError,
    MissingRequiredParameter,
    ParameterValidationError,
    RequestBodyValidationError,
)
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue
from werkzeug.datastructures import Headers, ImmutableMultiDict

from autofeedback.catalog._catalog import _fullmatch
from autofeedback.core._model import Operation
from autofeedback.core._resolve import cookie_args

#: Error kind -> (HTTP status, terse code) when the docs define no code for it.
DEFAULT_ERROR_CODES: Mapping[str, tuple[int, int]] = {
    "missing_parameter": (400, 40001),
    "unknown_parameter": (400, 40002),
    "wrong_type": (400, 40003),
    "bad_format": (400, 40004),
    "bad_value": (400, 40005),
    "invalid_body": (400, 40006),
    "unknown_path": (404, 40400),
    "not_found": (404, 40401),
    "method_not_allowed": (405, 40500),
    "conflict": (409, 40900),
    "invalid_state": (409, 40901),
    "body_too_large": (413, 41300),
    "quota_exceeded": (429, 42900),
}

MAX_BODY_BYTES = 1 << 20


#: Characters of a path or query string that ``requests_seen`` and the log keep (whole
#: 60 KB query strings were 6 GB at the 100,000-entry cap).
_MAX_SHOWN = 1024
# Bodies up to this size are read and dropped so the client sees the 413, larger ones
# get the connection closed on them.
_DRAIN_LIMIT = 16 << 20
_HOST_URL = "http://127.0.0.1"


@dataclass(frozen=True)
class SeenRequest:
    """What the sandbox received and answered; ``kind`` is ``"ok"`` or an error kind."""

    method: str
    path: str
    status: int
    kind: str = "ok"
    operation: str | None = None
    #: the query string as received, credentials redacted (the access log shows it)
    query: str = ""


# Words a documented error description uses for each kind of error; the first kind in
# a description's text is the one it documents.
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "missing_parameter": ("missing", "required", "must be provided", "not provided"),
    "unknown_parameter": ("unknown", "unexpected", "not allowed", "unsupported", "unrecognized"),
    "bad_format": ("format", "yyyy", "pattern", "iso 8601", "iso8601", "malformed"),
    "bad_value": (
        "one of",
        "enum",
        "range",
        "between",
        "at least",
        "at most",
        "greater",
        "less",
        "exceed",
        "invalid value",
        "allowed values",
    ),
    "wrong_type": (
        "type",
        "must be an integer",
        "must be a number",
        "must be a boolean",
        "integer",
        "number",
        "boolean",
        "numeric",
    ),
    "invalid_body": ("json", "body", "payload", "not valid", "parse"),
    "body_too_large": ("too large", "size"),
}
_CODE_IN_TEXT = re.compile(
    r"\b(?:info[_ ]?code|error[_ ]?code|code)\b\s*[:=#]?\s*(\d{3,6})\b", re.IGNORECASE
)


@dataclass(frozen=True)
class _Error:
    kind: str
    message: str
    location: tuple[str, ...] = ()
    parameter: str | None = None


@dataclass(frozen=True)
class _DocumentedCode:
    code: int
    status: int
    key: str
    text: str


@dataclass(frozen=True)
class _Route:
    template: str
    method: str
    operation: Operation
    #: one RE2 regex per segment (linear time: a backtracking ``re`` took 45 s on one
    #: 3.2 KB URL against ``{a}-{b}-{c}.json``, every other client waiting on the GIL)
    segments: tuple[Any, ...]
    names: tuple[tuple[str, ...], ...]
    literal_len: int
    query_names: frozenset[str] = field(default_factory=frozenset)


def _without_response_bodies(operation: dict[str, Any]) -> dict[str, Any]:
    """Responses are built from the catalog, not validated: their schemas (large once
    every ``$ref`` is inlined) would only slow openapi-core's spec check tenfold."""
    responses = {s: {"description": r["description"]} for s, r in operation["responses"].items()}
    return {**operation, "responses": responses}


def _one_type_parameters(operation: dict[str, Any]) -> dict[str, Any]:
    """Parameters typed ``["object", "null"]`` as ``"object"``: openapi-core's style
    deserializers read ``type`` as one string and raised TypeError on every request to
    the operation (OpenAI's ``GET /fine_tuning/jobs`` and its ``metadata``), and a value
    in a query string is never JSON null anyway."""
    parameters = operation.get("parameters")
    if not isinstance(parameters, list):
        return operation
    fixed = []
    for parameter in parameters:
        schema = parameter.get("schema") if isinstance(parameter, dict) else None
        types = schema.get("type") if isinstance(schema, dict) else None
        if isinstance(types, list):
            kept = [t for t in types if t != "null"] or ["null"]
            parameter = {**parameter, "schema": {**schema, "type": kept[0]}}  # type: ignore[dict-item]
        fixed.append(parameter)
    return {**operation, "parameters": fixed}


def _json_body(body: bytes | None) -> Any:
    """The request body as JSON, or ``None`` (validation already refused bad JSON)."""
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


_MESSAGE_KEYS = ("message", "status_message", "error_message", "detail", "error")
_STATUS_KEYS = ("status", "status_code", "code")


def _fill_error(payload: dict[str, Any], message: str) -> None:
    """Put the reason and the status into a generated error body where it has room."""
    for key in _MESSAGE_KEYS:
        if isinstance(payload.get(key), str):
            payload[key] = message
            break
    for key in _STATUS_KEYS:
        if isinstance(payload.get(key), int) and not isinstance(payload.get(key), bool):
            payload[key] = 404
            break
    if isinstance(payload.get("error"), dict):
        _fill_error(payload["error"], message)  # Spotify's {"error": {"status", "message"}}


_VAR = re.compile(r"\{([^{}/]+)\}")


def _compile_route(template: str, method: str, op: Operation) -> _Route:
    segments: list[Any] = []
    names: list[tuple[str, ...]] = []
    literal = 0
    for raw in template.strip("/").split("/") if template.strip("/") else []:
        pattern, pos = "", 0
        seg_names: list[str] = []
        for m in _VAR.finditer(raw):
            text = unquote(raw[pos : m.start()])
            pattern += re.escape(text)
            literal += len(text)
            pattern += f"(?P<v{len(seg_names)}>.+?)"
            seg_names.append(m.group(1))
            pos = m.end()
        text = unquote(raw[pos:])
        pattern += re.escape(text)
        literal += len(text) + 1
        segments.append(re2.compile("(?s)" + pattern))
        names.append(tuple(seg_names))
    query = frozenset(p.name for p in op.parameters if p.location == "query")
    if op.is_http and op.path is not None:
        # path parameters the template lacks were exported as query parameters
        query |= {
            p.name
            for p in op.parameters
            if p.location == "path" and "{" + p.name + "}" not in template
        }
    return _Route(template, method, op, tuple(segments), tuple(names), literal, query)


def _match(route: _Route, segments: Sequence[str]) -> dict[str, str] | None:
    if len(segments) != len(route.segments):
        return None
    out: dict[str, str] = {}
    for text, regex, names in zip(segments, route.segments, route.names, strict=True):
        groups = _fullmatch(regex, text)
        if groups is None:
            return None
        out.update(zip(names, groups, strict=True))
    return out


class _OpenAPIRequest:
    """openapi-core's ``Request`` protocol over what the handler read."""

    def __init__(
        self,
        *,
        method: str,
        path_pattern: str,
        path_vars: Mapping[str, str],
        query: Sequence[tuple[str, str]],
        headers: Mapping[str, str],
        body: bytes | None,
        content_type: str,
    ) -> None:
        self.host_url = _HOST_URL
        self.path = path_pattern
        self.path_pattern = path_pattern
        self.method = method.lower()
        self.body = body
        self.content_type = content_type
        # read as the scanner reads a Cookie header (RFC 6265: quotes dropped)
        cookies = [(a.name, str(a.value)) for a in cookie_args(headers.get("cookie", ""))]
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(query)),
            header=Headers(list(headers.items())),
            cookie=ImmutableMultiDict(cookies),
            path=dict(path_vars),
        )


def _explain(exc: BaseException, media: str = "application/json") -> list[_Error]:
    """What ``exc`` (openapi-core's) says is wrong with a request; ``media``: the body's
    documented media type."""
    cause = exc.__cause__
    if isinstance(exc, ParameterValidationError):
        where = (exc.location, exc.name)
        what = f"{exc.location} parameter '{exc.name}'"
        if isinstance(exc, MissingRequiredParameter):
            return [_Error("missing_parameter", f"missing required {what}", where, exc.name)]
        if isinstance(cause, CastError):
            return [_Error("wrong_type", f"{what} must be of type {cause.type}", where, exc.name)]
        if isinstance(cause, InvalidSchemaValue):
            return [_schema_error(e, where, exc.name) for e in cause.schema_errors] or [
                _Error("bad_value", f"invalid {what}", where, exc.name)
            ]
        if isinstance(cause, DeserializeError):
            return [_Error("wrong_type", f"{what} cannot be read as documented", where, exc.name)]
        return [_Error("bad_value", f"invalid {what}", where, exc.name)]
    if isinstance(exc, MissingRequestBodyError):
        return [_Error("missing_parameter", "missing required JSON request body", ("body",))]
    if isinstance(exc, RequestBodyValidationError):
        if isinstance(cause, InvalidSchemaValue):
            return [_schema_error(e, ("body",), None) for e in cause.schema_errors] or [
                _Error("bad_value", "invalid request body", ("body",))
            ]
        if isinstance(cause, MediaTypeNotFound):
            return [_Error("invalid_body", f"the body must be sent as {media}", ("body",))]
        if media != "application/json":
            return [_Error("invalid_body", f"the body cannot be read as {media}", ("body",))]
        return [_Error("invalid_body", "the body is not valid JSON", ("body",))]
    if isinstance(exc, OperationNotFound):
        return [_Error("method_not_allowed", "method not documented for this path")]
    if isinstance(exc, PathError):
        return [_Error("unknown_path", "no documented operation at this path")]
    return [_Error("bad_value", f"invalid request ({type(exc).__name__})")]


def _schema_error(err: Any, where: tuple[str, ...], parameter: str | None) -> _Error:
    """One jsonschema ``ValidationError`` as an :class:`_Error`."""
    validator = str(getattr(err, "validator", ""))
    path = tuple(str(p) for p in getattr(err, "absolute_path", ()))
    location = where + path
    name = parameter if parameter is not None else (path[0] if path else None)
    message = str(getattr(err, "message", "invalid value"))
    if len(message) > 300:
        message = message[:300] + "..."
    label = ".".join(location[1:]) if len(location) > 1 else location[0]
    if validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", message)
        if missing:
            name = missing[0]
            location = (*location, missing[0])
        kind = "missing_parameter"
    elif validator in ("additionalProperties", "unevaluatedProperties"):
        unexpected = re.findall(r"'([^']+)'", message)
        if unexpected:
            name = unexpected[0]
            location = (*location, unexpected[0])
        kind = "unknown_parameter"
    elif validator == "type":
        kind = "wrong_type"
    elif validator in ("format", "pattern"):
        kind = "bad_format"
    else:
        kind = "bad_value"
    return _Error(kind, f"{label}: {message}", location, name)


def _kind_hits(text: str) -> dict[str, tuple[int, int]]:
    """Error kind -> (how many of its words ``text`` uses, where the first one is)."""
    lowered = text.lower()
    out: dict[str, tuple[int, int]] = {}
    for kind, words in _KIND_WORDS.items():
        positions = [p for p in (lowered.find(w) for w in words) if p >= 0]
        if positions:
            out[kind] = (len(positions), min(positions))
    return out


def _kind_of_hits(hits: Mapping[str, tuple[int, int]]) -> str | None:
    """The kind a description documents: most words, then the earliest word."""
    if not hits:
        return None
    return min(hits, key=lambda k: (-hits[k][0], hits[k][1]))


def _documented_codes(op: Operation) -> tuple[_DocumentedCode, ...]:
    out: list[_DocumentedCode] = []
    for r in op.error_responses:
        status = int(r.status) if r.status.isdigit() else 400
        if isinstance(r.example, Mapping):
            key = next(
                (
                    k
                    for k, v in r.example.items()
                    if isinstance(k, str)
                    and "code" in k.lower()
                    and isinstance(v, int)
                    and not isinstance(v, bool)
                ),
                None,
            )
            if key is not None:
                text = " ".join(
                    [r.description] + [str(v) for v in r.example.values() if isinstance(v, str)]
                )
                out.append(_DocumentedCode(int(r.example[key]), status, key, text))
                continue
        # "info_code 20001: ... ; info_code 20002: ..." documents several codes
        matches = list(_CODE_IN_TEXT.finditer(r.description))
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(r.description)
            key = "info_code" if "info" in m.group(0).lower() else "error_code"
            if not m.group(0).lower().startswith(("info", "error")):
                key = "code"
            out.append(_DocumentedCode(int(m.group(1)), status, key, r.description[m.end() : end]))
    return tuple(out)
