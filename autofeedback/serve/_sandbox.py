"""A sandbox API server: any loaded spec, served on 127.0.0.1, validating every request.

Each request is checked with openapi-core against :func:`autofeedback.sandbox.to_openapi` of the
catalog (function-style operations are ``POST /{name}``, see :func:`function_path`).
A valid request gets the first documented 2xx status and a body built from the
documented example, else generated from the response schema. An invalid one gets:

* verbose mode: 400 (404 unknown path, 405 wrong method, 413 body too large) and a JSON
  body that explains every error;
* terse mode: the same status and only a short machine code, ``{"info_code": 40001}``
  (the AutoFeedback paper's Figure 1), so that only the docs can explain it.

Terse codes come from the operation's documented error responses when they define
codes (a description such as ``"info_code 20001: `since` must be a date"`` or an
example ``{"info_code": 20001}``): the documented code whose text matches the error's
kind, and best the offending parameter, wins. Otherwise, this stable default table:

=====  ====  ===================  ==================================================
code   HTTP  kind                 meaning
=====  ====  ===================  ==================================================
40001  400   missing_parameter    a required parameter or request body is missing
40002  400   unknown_parameter    an undocumented query parameter or body property
40003  400   wrong_type           a value of the wrong type
40004  400   bad_format           a string that breaks its format or pattern
40005  400   bad_value            a value outside an enum or a numeric/length bound
40006  400   invalid_body         a body that is not JSON, or the wrong content type
40400  404   unknown_path         no documented path (or function) matches
40401  404   not_found            a valid request names an id this session never issued
40500  405   method_not_allowed   the path exists, the method is not documented for it
40900  409   conflict             a unique field (a name) another resource already holds
40901  409   invalid_state        the resource is in a state the docs refuse (shipped)
41300  413   body_too_large       the body exceeds the server's limit (1 MiB)
42900  429   quota_exceeded       more creates than the documented quota allows
=====  ====  ===================  ==================================================

Beyond the schemas, the sandbox refuses what a real server knows and the schemas do
not say, each with the code and status the spec documents for it:

* rules a parameter's description states (:mod:`autofeedback.serve._doc_rules`): a layout
  (``Format: %Y-%m-%d``, ``YYYY-MM-DD``), bounds (``1-50``, ``at most 100
  characters``, ``A maximum of 50 IDs``), ``in the future``, ``must be uppercase``:
  ``bad_format`` or ``bad_value``;
* state errors its error responses document (:mod:`autofeedback.serve._sandbox_refusals`):
  ``conflict``, ``invalid_state``, ``quota_exceeded`` (the documented status, e.g. a
  ``409 "the order has already shipped"``). Deleting twice, or naming a deleted id, is
  ``not_found``.

Valid requests are answered by :class:`autofeedback.serve._sandbox_state.SessionState`,
consistently across calls: each collection of the spec (:mod:`autofeedback.serve._sandbox_store`)
is one store that its list pages through, its detail reads, and its creates, updates
and deletes change; the ids a search returns are the ids detail endpoints accept; an id
never issued, or deleted, gets the operation's documented 404 (its example, its schema
with the message filled in, or its documented code), else the ``not_found`` row above.
Values are made by :mod:`autofeedback.serve._sandbox_values` and satisfy their schemas.
``POST /__sandbox__/reset`` (or :meth:`Sandbox.reset`) starts a fresh session;
:attr:`Sandbox.notes` says what the spec gives no way to know.

The server binds to a loopback address (another one needs ``allow_remote``, see
:mod:`autofeedback.serve._serve`) and logs only method, path and status.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import json
import re
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from os import PathLike
from pathlib import Path
from random import Random
from types import TracebackType
from typing import IO, Any
from urllib.parse import parse_qsl, unquote, urlsplit

import re2  # type: ignore[import-untyped]
from jsonschema.validators import extend
from openapi_core import Config, OpenAPI
from openapi_core.casting.schemas.exceptions import CastError
from openapi_core.datatypes import RequestParameters
from openapi_core.deserializing.exceptions import DeserializeError
from openapi_core.templating.media_types.exceptions import MediaTypeNotFound
from openapi_core.templating.paths.exceptions import OperationNotFound, PathError
from openapi_core.unmarshalling.schemas import (
    oas31_format_unmarshallers,
    oas31_types_unmarshaller,
)
from openapi_core.unmarshalling.schemas.factories import SchemaUnmarshallersFactory
from openapi_core.validation.request.exceptions import (
    MissingRequestBodyError,
    MissingRequiredParameter,
    ParameterValidationError,
    RequestBodyValidationError,
)
from openapi_core.validation.schemas.exceptions import InvalidSchemaValue
from openapi_core.validation.schemas.factories import SchemaValidatorsFactory
from openapi_schema_validator import OAS30ReadValidator, OAS31Validator
from werkzeug.datastructures import Headers, ImmutableMultiDict

from autofeedback.catalog._catalog import ApiCatalog, _fullmatch
from autofeedback.catalog._openapi import _export
from autofeedback.catalog._schema import sanitize_schema
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError, SpecError
from autofeedback.core._model import Operation, Response
from autofeedback.core._patterns import CHECK_BUDGET, PatternBudget
from autofeedback.core._patterns import KEYWORDS as PATTERN_KEYWORDS
from autofeedback.core._redact import auth_names, redact
from autofeedback.serve._doc_rules import DocRule, broken_rules, operation_rules, request_values
from autofeedback.serve._listen import cannot_listen
from autofeedback.serve._sandbox_state import NotFound, Refused, SessionState, generate
from autofeedback.serve._serve import DEFAULT_GRACE, check_host, die_on_second_signal, is_loopback

__all__ = ["DEFAULT_ERROR_CODES", "RESET_PATH", "Sandbox", "SeenRequest", "run_sandbox"]

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
_MAX_SEEN = 100_000
#: Characters of a path or query string that ``requests_seen`` and the log keep (whole
#: 60 KB query strings were 6 GB at the 100,000-entry cap).
_MAX_SHOWN = 1024
# Bodies up to this size are read and dropped so the client sees the 413, larger ones
# get the connection closed on them.
_DRAIN_LIMIT = 16 << 20
_HOST_URL = "http://127.0.0.1"
#: POST here starts a fresh session (forgets created and issued ids).
RESET_PATH = "/__sandbox__/reset"
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE")

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


# openapi-core validates with jsonschema, whose pattern keywords run Python's backtracking
# re: a spec's "^(a+)+$" would stall the server. The export is OpenAPI 3.1, so its
# validator, with the pattern keywords on the linear-time engine (autofeedback.core._patterns).
_SCHEMA_VALIDATORS = SchemaValidatorsFactory(
    extend(OAS31Validator, PATTERN_KEYWORDS),  # type: ignore[no-untyped-call]
    # openapi-core's own choice for 3.1 (its issue 506: byte/binary kept)
    format_checker=OAS30ReadValidator.FORMAT_CHECKER,
)
_SCHEMA_UNMARSHALLERS = SchemaUnmarshallersFactory(
    _SCHEMA_VALIDATORS,
    oas31_types_unmarshaller,
    format_unmarshallers=oas31_format_unmarshallers,
)


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


class Sandbox:
    """A local HTTP server answering the catalog's operations; a context manager.

    ``terse`` answers errors with a code only; ``error_codes`` overrides codes of the
    default table by error kind (``{"wrong_type": 777}``); ``seed`` varies generated
    bodies and created ids (same seed, same requests: same answers); ``max_resources``
    bounds the ids one session remembers; ``log`` gets one ``METHOD /path STATUS`` line
    per request. Paths are accepted with or without the path prefix of the spec's
    servers (``/3/movie/550`` and ``/movie/550`` for TMDB); ``requests_seen`` records the
    last 100,000 answers.

    Bounded: bodies over :data:`MAX_BODY_BYTES` get 413, a client silent for
    ``client_timeout`` seconds is disconnected, so is one whose request (line, headers
    and body) has not all arrived ``request_timeout`` seconds after it began (a slow
    client sending a header line every few seconds held its slot for good), and at most
    ``max_connections`` are served at once (the rest wait in a 4096-deep listen backlog).
    ``host`` must be a loopback address unless ``allow_remote``.

    >>> catalog = ApiCatalog([Operation("ping")])
    >>> with Sandbox(catalog) as sandbox:  # doctest: +SKIP
    ...     requests.post(sandbox.url + "/ping", json={}).status_code
    200
    """

    def __init__(
        self,
        catalog: ApiCatalog,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        terse: bool = False,
        error_codes: Mapping[str, int] | None = None,
        seed: int = 0,
        log: IO[str] | None = None,
        client_timeout: float = 15.0,
        request_timeout: float = 10.0,
        max_connections: int = 256,
        max_resources: int = 10_000,
        allow_remote: bool = False,
    ) -> None:
        if client_timeout <= 0 or request_timeout <= 0 or max_connections < 1 or max_resources < 1:
            raise ConfigurationError(
                "client_timeout and request_timeout must be > 0, max_connections and "
                "max_resources >= 1"
            )
        self.warning = check_host(host, allow_remote, "the sandbox")
        self.catalog = catalog
        self.host = host
        self.port = port
        self.terse = terse
        self.seed = seed
        self.client_timeout = client_timeout
        self.request_timeout = request_timeout
        self.max_connections = max_connections
        # bounded: a sandbox left running must not grow with every request it answers
        self.requests_seen: deque[SeenRequest] = deque(maxlen=_MAX_SEEN)
        self._log = log
        self._codes = {k: v[1] for k, v in DEFAULT_ERROR_CODES.items()}
        if error_codes:
            unknown = set(error_codes) - set(DEFAULT_ERROR_CODES)
            if unknown:
                raise ConfigurationError(
                    f"unknown error kind(s) {sorted(unknown)}; known: {sorted(DEFAULT_ERROR_CODES)}"
                )
            self._codes.update(error_codes)
        exported = _export(catalog)
        document = dict(exported.document)
        # one fixed server, and longest paths first: openapi-core takes the first path
        # whose name ends the URL, and "/{id}" also ends "/books/{id}"
        document["servers"] = [{"url": _HOST_URL}]
        document["paths"] = {
            path: {
                method: _one_type_parameters(_without_response_bodies(op))
                for method, op in item.items()
            }
            for path, item in sorted(document["paths"].items(), key=lambda kv: -len(kv[0]))
        }
        try:
            # The export is checked against the OpenAPI 3.1 meta-schema by the test suite
            # on every real spec we know; re-checking here costs seconds per start.
            self._openapi = OpenAPI.from_dict(
                document,
                config=Config(
                    spec_validator_cls=None,  # type: ignore[arg-type]
                    schema_validators_factory=_SCHEMA_VALIDATORS,
                    schema_unmarshallers_factory=_SCHEMA_UNMARSHALLERS,
                ),
            )
        except Exception as exc:  # openapi-core raises many unrelated types here
            raise SpecError(f"cannot serve this spec: {exc}", source=catalog.source) from exc
        self._routes = [
            _compile_route(path, method, op) for (path, method), op in exported.routes.items()
        ]
        self._doc_codes = {op.name: _documented_codes(op) for op in catalog.operations}
        #: rules the descriptions state that the schemas do not (a date's layout)
        self._doc_rules: dict[str, tuple[DocRule, ...]] = {}
        for op in catalog.operations:
            rules = operation_rules(op)
            if rules:
                self._doc_rules[op.name] = rules
        # one error key for every answer: the one the spec documents most ("info_code",
        # "code", "error_code"), also on answers whose code the spec does not document
        keys = Counter(d.key for docs in self._doc_codes.values() for d in docs)
        self.error_key = keys.most_common(1)[0][0] if keys else "info_code"
        self._auth = auth_names(catalog)
        self._state = SessionState(catalog.operations, seed=seed, max_resources=max_resources)
        #: what the sandbox cannot know from the spec, one line each (a list whose items
        #: share no id field with their detail); ``autofeedback sandbox`` prints them once
        self.notes: tuple[str, ...] = self._state.notes
        self._prefixes = sorted(
            {urlsplit(s).path.rstrip("/") for s in catalog.servers} - {""}, key=len, reverse=True
        )
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:54321`` (after :meth:`start`)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def _bind(self) -> _Server:
        if self._server is None:
            handler = type(
                "_BoundHandler", (_Handler,), {"sandbox": self, "timeout": self.client_timeout}
            )
            server_cls = _IPv6Server if ":" in self.host else _Server
            self._server = server_cls((self.host, self.port), handler)
            self._server.slots = threading.BoundedSemaphore(self.max_connections)
            self._server.reaper = _Reaper()
            self.port = int(self._server.server_address[1])
        return self._server

    def start(self) -> Sandbox:
        """Bind and serve in a background thread; returns ``self``."""
        if self._thread is None:
            server = self._bind()
            self._thread = threading.Thread(
                target=server.serve_forever, name="autofeedback-sandbox", daemon=True
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Bind and serve in this thread until :meth:`stop` or KeyboardInterrupt."""
        self._bind().serve_forever()

    def stop(self, grace: float = 0.0) -> None:
        """Stop serving; requests being answered get ``grace`` seconds to finish."""
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
                self._thread.join()
            self._server.server_close()
            self._server.reaper.close_waiting()
            self._server.drain(grace)
            self._server.reaper.stop()
        self._server = None
        self._thread = None

    def reset(self) -> None:
        """Start a fresh session: forget every id issued, created or deleted since the
        start (``POST /__sandbox__/reset`` does the same over HTTP)."""
        self._state.reset()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- answering -----------------------------------------------------------------

    def handle(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        *,
        oversize: bool = False,
    ) -> tuple[int, dict[str, str], Any, SeenRequest]:
        """Answer one request: ``(status, extra headers, JSON body, record)``.

        ``headers`` have lower-case names; ``oversize`` says the body was too large to
        read."""
        status, extra, payload, seen = self._handle(method, target, headers, body, oversize)
        query = urlsplit(target).query
        if query:
            shown = str(redact("?" + query[:_MAX_SHOWN], names=self._auth))[1:]
            seen = dataclasses.replace(seen, query=_cut(shown, len(query)))
        if len(seen.path) > _MAX_SHOWN:
            seen = dataclasses.replace(seen, path=_cut(seen.path[:_MAX_SHOWN], len(seen.path)))
        return status, extra, payload, seen

    def _handle(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
        oversize: bool,
    ) -> tuple[int, dict[str, str], Any, SeenRequest]:
        split = urlsplit(target)
        raw_path = split.path or "/"
        if raw_path == RESET_PATH and method == "POST":
            self.reset()
            return 200, {}, {"reset": True}, SeenRequest(method, raw_path, 200, "reset")
        route, path_vars, allowed = self._route(method, raw_path)
        if route is None:
            if allowed:
                error = _Error(
                    "method_not_allowed",
                    f"{method} is not documented for {raw_path}; allowed: {', '.join(allowed)}",
                )
                return self._error(method, raw_path, None, [error], {"Allow": ", ".join(allowed)})
            error = _Error("unknown_path", f"no documented operation at {raw_path}")
            return self._error(method, raw_path, None, [error], {})
        op = route.operation
        if oversize or (body is not None and len(body) > MAX_BODY_BYTES):
            error = _Error("body_too_large", f"the body exceeds {MAX_BODY_BYTES} bytes")
            return self._error(method, raw_path, op, [error], {})
        query = parse_qsl(split.query, keep_blank_values=True)
        errors = [
            _Error("unknown_parameter", f"unknown query parameter '{name}'", ("query", name), name)
            for name in dict.fromkeys(n for n, _ in query)
            if name not in route.query_names
        ]
        errors += self._validate(route, path_vars, query, headers, body)
        if not errors and op.name in self._doc_rules:
            errors = self._described(op, path_vars, query, headers, body)
        if errors:
            return self._error(method, raw_path, op, errors, {})
        answer = self._state.answer(op, path_vars, query, _json_body(body))
        if isinstance(answer, NotFound):
            return self._not_found(method, raw_path, op, answer)
        if isinstance(answer, Refused):
            return self._refused(method, raw_path, op, answer)
        status, payload = answer
        seen = SeenRequest(method, raw_path, status, "ok", op.name)
        return status, {}, payload, seen

    def _route(self, method: str, raw_path: str) -> tuple[_Route | None, dict[str, str], list[str]]:
        candidates = [raw_path]
        for prefix in self._prefixes:
            if raw_path == prefix or raw_path.startswith(prefix + "/"):
                candidates.insert(0, raw_path[len(prefix) :] or "/")
        for path in candidates:
            segments = [unquote(s) for s in path.strip("/").split("/")] if path.strip("/") else []
            matches: list[tuple[_Route, dict[str, str]]] = []
            for route in self._routes:
                found = _match(route, segments)
                if found is not None:
                    matches.append((route, found))
            if not matches:
                continue
            best = max(r.literal_len for r, _ in matches)
            matches = [(r, v) for r, v in matches if r.literal_len == best]
            for route, path_vars in matches:
                if route.method == method.lower():
                    return route, path_vars, []
            return None, {}, sorted({r.method.upper() for r, _ in matches})
        return None, {}, []

    def _validate(
        self,
        route: _Route,
        path_vars: dict[str, str],
        query: list[tuple[str, str]],
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> list[_Error]:
        content_type = headers.get("content-type", "")
        if body and not content_type:
            content_type = "application/json"  # a body with no type is read as JSON
        request = _OpenAPIRequest(
            method=route.method,
            path_pattern=route.template,
            path_vars=path_vars,
            query=query,
            headers=headers,
            body=body,
            content_type=content_type.lower() or "application/json",
        )
        # one time bound for all of the request's patterns that RE2 cannot run: this lock
        # holds every other client meanwhile
        with self._lock, PatternBudget(CHECK_BUDGET):
            try:
                result = self._openapi.unmarshal_request(request)
            except Exception as exc:  # never let a validator bug take the server down
                return [
                    _Error(
                        "invalid_body", f"the request could not be validated: {type(exc).__name__}"
                    )
                ]
        errors: list[_Error] = []
        for problem in result.errors:
            errors.extend(_explain(problem))
        return errors

    def _described(
        self,
        op: Operation,
        path_vars: Mapping[str, str],
        query: list[tuple[str, str]],
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> list[_Error]:
        """What a valid request breaks of the rules its parameters' descriptions state
        (a ``string`` documented as ``Format: %Y-%m-%d``): a real server refuses it."""
        values = request_values(
            op, path=path_vars, query=dict(query), headers=headers, body=_json_body(body)
        )
        errors = []
        for rule, value in broken_rules(self._doc_rules[op.name], values):
            where = "body" if rule.location == "argument" else rule.location
            shown = json.dumps(value, ensure_ascii=False, default=str)
            if len(shown) > 80:
                shown = shown[:80] + "..."
            errors.append(
                _Error(
                    rule.error_kind,
                    f"{where} parameter '{rule.parameter}' is {shown}; the docs say: {rule.says}",
                    (where, rule.parameter),
                    rule.parameter,
                )
            )
        return errors

    def _refused(
        self, method: str, path: str, op: Operation, refused: Refused
    ) -> tuple[int, dict[str, str], Any, SeenRequest]:
        """A documented state error: the documented status, the documented code (terse:
        the code alone), else the documented example, else the ``refused.kind`` row."""
        rule = refused.rule
        status = rule.status if 400 <= rule.status < 500 else DEFAULT_ERROR_CODES[refused.kind][0]
        seen = SeenRequest(method, path, status, refused.kind, op.name)
        docs = [d for d in self._doc_codes.get(op.name, ()) if d.status == status]
        matched = [d for d in docs if d.text.strip() and d.text.strip() in rule.text]
        documented = (matched or (docs if len(docs) == 1 else []))[:1]
        code = documented[0].code if documented else self._codes[refused.kind]
        if self.terse:
            return status, {}, {self.error_key: code}, seen
        if rule.response.example is not None:
            return status, {}, rule.response.example, seen
        location = list(refused.location)
        payload: dict[str, Any] = {
            self.error_key: code,
            "error": refused.kind,
            "message": refused.message,
            "errors": [{"kind": refused.kind, "message": refused.message, "location": location}],
            "operation": op.name,
        }
        return status, {}, payload, seen

    def _not_found(
        self, method: str, path: str, op: Operation, missing: NotFound
    ) -> tuple[int, dict[str, str], Any, SeenRequest]:
        """The operation's documented 404: its example, else its schema with the message
        filled in, else an error answer with its documented code or ``not_found``'s."""
        documented: Response | None = next((r for r in op.responses if r.status == "404"), None)
        if documented is not None and (documented.example is not None or documented.schema):
            if documented.example is not None:
                payload: Any = documented.example
            else:
                payload = generate(
                    sanitize_schema(documented.schema, drop="writeOnly"), Random(self.seed)
                )
                if isinstance(payload, dict):
                    _fill_error(payload, missing.message)
            return 404, {}, payload, SeenRequest(method, path, 404, "not_found", op.name)
        error = _Error("not_found", missing.message, ("path", missing.parameter), missing.parameter)
        return self._error(method, path, op, [error], {})

    def _error(
        self,
        method: str,
        path: str,
        op: Operation | None,
        errors: list[_Error],
        headers: dict[str, str],
    ) -> tuple[int, dict[str, str], Any, SeenRequest]:
        first = errors[0]
        status = DEFAULT_ERROR_CODES[first.kind][0]
        code, key = self._codes[first.kind], self.error_key
        documented = self._pick_code(op, first)
        if documented is not None:
            code = documented.code
            if 400 <= documented.status < 500 and status == 400:
                status = documented.status
        name = op.name if op else None
        seen = SeenRequest(method, path, status, first.kind, name)
        if self.terse:
            return status, headers, {key: code}, seen
        payload: dict[str, Any] = {
            key: code,
            "error": first.kind,
            "message": first.message,
            "errors": [
                {"kind": e.kind, "message": e.message, "location": list(e.location)} for e in errors
            ],
        }
        if name:
            payload["operation"] = name
        return status, headers, payload, seen

    def _pick_code(self, op: Operation | None, error: _Error) -> _DocumentedCode | None:
        """The documented code that best explains ``error``: one naming the parameter
        beats one of the same kind, the count of kind words breaks ties."""
        if op is None:
            return None
        best: tuple[float, _DocumentedCode] | None = None
        for doc in self._doc_codes.get(op.name, ()):
            hits = _kind_hits(doc.text)
            score = 0.0
            if error.kind == "not_found":
                if doc.status != 404:
                    continue  # "`bookId` must be a positive integer" does not mean "no such book"
                score += 1
            if _kind_of_hits(hits) == error.kind:
                score += 1
            if error.parameter and re.search(
                rf"(?<![\w-]){re.escape(error.parameter)}(?![\w-])", doc.text
            ):
                score += 2
            if score and (best is None or score + 0.1 * hits.get(error.kind, (0, 0))[0] > best[0]):
                best = (score + 0.1 * hits.get(error.kind, (0, 0))[0], doc)
        return best[1] if best else None

    def _record(self, seen: SeenRequest) -> None:
        with self._lock:
            self.requests_seen.append(seen)
        if self._log is not None:
            target = f"{seen.path}?{seen.query}" if seen.query else seen.path
            self._log.write(f"{seen.method} {target} {seen.status}\n")
            self._log.flush()


class _Slot:
    """One of the server's connection slots, released at most once: a ``kill`` that lands
    while the main thread hands a connection to its thread must not release the slot a
    second time (a ``BoundedSemaphore`` then raises, and socketserver swallows the
    interrupt with it, so the sandbox ignored SIGTERM)."""

    def __init__(self, slots: threading.BoundedSemaphore) -> None:
        slots.acquire()
        self._slots = slots
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._slots.release()


def _cut(text: str, size: int) -> str:
    """``text`` (the start of something ``size`` characters long), marked when cut."""
    return text if size <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}...({size} characters)"


class _Reaper:
    """One thread that shuts down connections whose request is late: a handler watches
    its connection until the request has arrived, the reaper closes it at the deadline
    (a socket timeout bounds each read, not the whole request)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._due: list[tuple[float, int, Any]] = []
        self._watched: dict[int, float] = {}
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="sandbox-reaper", daemon=True)
        self._thread.start()

    def watch(self, conn: Any, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self._lock:
            self._watched[id(conn)] = deadline
            heapq.heappush(self._due, (deadline, id(conn), conn))
            self._lock.notify()

    def unwatch(self, conn: Any) -> None:
        with self._lock:
            self._watched.pop(id(conn), None)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify()

    def close_waiting(self) -> None:
        """Shut down every connection still waiting for (the rest of) a request: an idle
        keep-alive one included. Those being answered are left to finish."""
        with self._lock:
            due = [(key, conn) for _, key, conn in self._due if key in self._watched]
            self._watched.clear()
            self._due.clear()
        for _, conn in due:
            with contextlib.suppress(OSError):  # already closed
                conn.shutdown(socket.SHUT_RDWR)

    def _run(self) -> None:
        with self._lock:
            while not self._stopped:
                now = time.monotonic()
                while self._due and self._due[0][0] <= now:
                    deadline, key, conn = heapq.heappop(self._due)
                    if self._watched.get(key) == deadline:  # still reading that request
                        del self._watched[key]
                        with contextlib.suppress(OSError):  # already closed
                            conn.shutdown(socket.SHUT_RDWR)
                wait = self._due[0][0] - now if self._due else None
                self._lock.wait(wait)


class _Server(ThreadingHTTPServer):
    """One thread per connection, at most ``slots`` at once: past that, connections wait
    in the listen backlog (long enough for a burst of thousands) instead of each
    getting a thread."""

    daemon_threads = True
    request_queue_size = 4096
    slots: threading.BoundedSemaphore
    reaper: _Reaper

    def drain(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the connections being served to end."""
        deadline = time.monotonic() + grace
        while self._held and time.monotonic() < deadline:
            time.sleep(0.05)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._held: dict[Any, _Slot] = {}
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        slot = self._held[request] = _Slot(self.slots)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._held.pop(request, None)
            slot.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            slot = self._held.pop(request, None)
            if slot is not None:
                slot.release()


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


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


# -- routing -----------------------------------------------------------------------

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
        cookies: list[tuple[str, str]] = []
        for part in headers.get("cookie", "").split(";"):
            if "=" in part:
                k, v = part.split("=", 1)
                cookies.append((k.strip(), v.strip()))
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(query)),
            header=Headers(list(headers.items())),
            cookie=ImmutableMultiDict(cookies),
            path=dict(path_vars),
        )


# -- explaining validation errors ------------------------------------------------------


def _explain(exc: BaseException) -> list[_Error]:
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
            return [_Error("invalid_body", "the body must be sent as application/json", ("body",))]
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


# -- HTTP ---------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    sandbox: Sandbox
    server_version = "autofeedback-sandbox"
    sys_version = ""
    timeout = 15
    # http.server's own answers to unparsable requests: JSON too, and nothing echoed
    error_content_type = "application/json"
    error_message_format = '{"error": "bad_http_request", "status": %(code)d}'

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the sandbox logs method, path and status itself; never headers or bodies

    def handle_one_request(self) -> None:
        # the request line, headers and body must all arrive within request_timeout
        reaper = getattr(self.server, "reaper", None)
        if reaper is not None:
            reaper.watch(self.connection, self.sandbox.request_timeout)
        try:
            super().handle_one_request()
        finally:
            if reaper is not None:
                reaper.unwatch(self.connection)

    def _serve(self) -> None:
        method = self.command.upper()
        body: bytes | None = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            length = int(headers.get("content-length", "0") or "0")
        except ValueError:
            length = -1
        if length < 0:
            self._reply(
                400,
                {},
                {
                    self.sandbox.error_key: DEFAULT_ERROR_CODES["invalid_body"][1],
                    "error": "invalid_body",
                    "message": "bad Content-Length header",
                },
                SeenRequest(method, urlsplit(self.path).path, 400, "invalid_body"),
            )
            return
        if length > MAX_BODY_BYTES:
            if length <= _DRAIN_LIMIT:
                remaining = length
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 16))
                    if not chunk:
                        break
                    remaining -= len(chunk)
            self.close_connection = True
        elif length > 0:
            body = self.rfile.read(length)
        reaper = getattr(self.server, "reaper", None)
        if reaper is not None:
            reaper.unwatch(self.connection)  # the request is in: answering is not late
        try:
            status, extra, payload, seen = self.sandbox.handle(
                method, self.path, headers, body, oversize=length > MAX_BODY_BYTES
            )
        except Exception as exc:  # the sandbox must answer, whatever it was sent
            status, extra, seen = 500, {}, SeenRequest(method, "?", 500, "internal_error")
            payload = {"error": "internal_error", "message": type(exc).__name__}
        self._reply(status, extra, payload, seen)

    def _reply(
        self, status: int, extra: Mapping[str, str], payload: Any, seen: SeenRequest
    ) -> None:
        self.sandbox._record(seen)  # before replying, so a client that got it sees it
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command.upper() != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve
    do_HEAD = do_OPTIONS = do_TRACE = _serve


# -- CLI ----------------------------------------------------------------------------


def run_sandbox(
    spec: str | PathLike[str],
    *,
    port: int | None = None,
    terse: bool = False,
    host: str = "127.0.0.1",
    seed: int = 0,
    allow_remote: bool = False,
    grace: float = DEFAULT_GRACE,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Serve ``spec`` until interrupted: what ``autofeedback sandbox`` runs.

    ``port=None`` takes the port of a loopback server the spec declares, else 8080.
    ``seed`` makes generated bodies and created ids repeatable (see :class:`Sandbox`).
    ``host`` other than loopback needs ``allow_remote`` (a warning is printed). After
    Ctrl-C or SIGTERM, requests being answered get ``grace`` seconds; a second signal
    ends the process at once. Returns 0 after Ctrl-C, 2 on a bad spec or a port that
    cannot be bound.

    >>> run_sandbox("specs/examples/bookshop.yaml", stdout=sys.stdout,
    ...             stderr=sys.stderr)  # doctest: +SKIP
    """
    try:
        catalog = ApiCatalog.from_file(Path(spec))
        if port is None:
            port = _default_port(catalog)
        sandbox = Sandbox(
            catalog,
            host=host,
            port=port,
            terse=terse,
            seed=seed,
            log=stdout,
            allow_remote=allow_remote,
        )
        sandbox._bind()
    except AutoFeedbackError as exc:
        stderr.write(f"autofeedback: error: {exc}\n")
        return 2
    except OSError as exc:
        stderr.write(f"autofeedback: error: {cannot_listen(host, port or 0, exc)}\n")
        return 2
    if sandbox.warning:
        stderr.write(f"autofeedback: {sandbox.warning}\n")
    for note in sandbox.notes:
        stderr.write(f"autofeedback: note: {note}\n")
    stderr.flush()
    mode = "terse" if terse else "verbose"
    stdout.write(
        f"Serving {len(catalog)} operations of {spec} at {sandbox.url} ({mode} errors); "
        "Ctrl-C to stop\n"
    )
    stdout.flush()
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        # `kill` (SIGTERM) stops the server as cleanly as Ctrl-C does; a second signal
        # while the answers in flight finish ends the process at once
        stopping = _Stopping()
        previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        sandbox.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.stop(grace)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


class _Stopping:
    """The signal handler: the first signal interrupts serving, the next one kills."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.seen:
            die_on_second_signal(signum)
        self.seen = True
        raise KeyboardInterrupt


def _default_port(catalog: ApiCatalog) -> int:
    for server in catalog.servers:
        parts = urlsplit(server)
        if parts.hostname and is_loopback(parts.hostname) and parts.port:
            return parts.port
    return 8080
