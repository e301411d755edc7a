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

This module holds :class:`Sandbox` (routing, validating, answering) and
:func:`run_sandbox`; :mod:`autofeedback.serve._sandbox_requests` the error codes, the
routes and the explained validation errors; :mod:`autofeedback.serve._sandbox_server` the
HTTP server and its request handler.
"""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import threading
from collections import Counter, deque
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from random import Random
from types import TracebackType
from typing import IO, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from jsonschema.validators import extend
from openapi_core import Config, OpenAPI
from openapi_core.unmarshalling.schemas import (
    oas31_format_unmarshallers,
    oas31_types_unmarshaller,
)
from openapi_core.unmarshalling.schemas.factories import SchemaUnmarshallersFactory
from openapi_core.validation.schemas.factories import SchemaValidatorsFactory
from openapi_schema_validator import OAS30ReadValidator, OAS31Validator

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._openapi import _export, request_media
from autofeedback.catalog._schema import sanitize_schema
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError, SpecError
from autofeedback.core._model import Operation, Response
from autofeedback.core._patterns import CHECK_BUDGET, PatternBudget
from autofeedback.core._patterns import KEYWORDS as PATTERN_KEYWORDS
from autofeedback.core._redact import auth_names, redact
from autofeedback.serve._doc_rules import DocRule, broken_rules, operation_rules, request_values
from autofeedback.serve._listen import cannot_listen
from autofeedback.serve._sandbox_requests import (
    _HOST_URL,
    _MAX_SHOWN,
    DEFAULT_ERROR_CODES,
    MAX_BODY_BYTES,
    SeenRequest,
    _compile_route,
    _documented_codes,
    _DocumentedCode,
    _Error,
    _explain,
    _fill_error,
    _json_body,
    _kind_hits,
    _kind_of_hits,
    _match,
    _one_type_parameters,
    _OpenAPIRequest,
    _Route,
    _without_response_bodies,
)
from autofeedback.serve._sandbox_server import _cut, _Handler, _IPv6Server, _Reaper, _Server
from autofeedback.serve._sandbox_state import NotFound, Refused, SessionState, generate
from autofeedback.serve._serve import DEFAULT_GRACE, check_host, die_on_second_signal, is_loopback

__all__ = ["DEFAULT_ERROR_CODES", "RESET_PATH", "Sandbox", "SeenRequest", "run_sandbox"]


_MAX_SEEN = 100_000
#: POST here starts a fresh session (forgets created and issued ids).
RESET_PATH = "/__sandbox__/reset"
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE")


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
        media = request_media(route.operation)
        for problem in result.errors:
            errors.extend(_explain(problem, media))
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


# -- routing -----------------------------------------------------------------------


# -- explaining validation errors ------------------------------------------------------


# -- HTTP ---------------------------------------------------------------------------


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
