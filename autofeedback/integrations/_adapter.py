"""Guard the HTTP layer: a ``requests`` transport adapter that scans every outgoing
request against the spec before it leaves, and optionally explains error responses.

::

    session = requests.Session()
    guard_session(session, "bookshop.yaml")      # mounted on http:// and https://
    session.get("http://127.0.0.1:8080/books", params={"limt": 5})
    # RequestRejected: GET http://127.0.0.1:8080/books?limt=5 -> searchBooks ...

Exceptions added here (both are also ``requests.RequestException``, so code that
already handles request failures handles these)::

    AutoFeedbackError
    ├── RequestRejected    a request broke the docs; nothing was sent
    └── ResponseRejected   the server answered with an error (also requests.HTTPError)
"""

from __future__ import annotations

import copy as copy_module
import dataclasses
import json
import logging
import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

import requests
from requests.adapters import HTTPAdapter

from autofeedback._parse._common import json_reason
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_values import deserialize
from autofeedback.core._exceptions import (
    AutoFeedbackError,
    ConfigurationError,
    HostNotAllowed,
    SpecError,
)
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.core._origins import Origins, shown_origin
from autofeedback.core._redact import (
    auth_names,
    credential_values,
    is_sensitive,
    redact,
    redact_finding,
    redact_repair,
    url_secrets,
)
from autofeedback.decide import Decider, Decision, RepairMode, check_repair
from autofeedback.decide._feedback import render_feedback
from autofeedback.integrations._guard import SpecLike, as_catalog
from autofeedback.loop._send import redact_url
from autofeedback.scanner._scan import Scanner, unreadable

if TYPE_CHECKING:
    from autofeedback.loop._explain import Explanation
    from doc_index import DocIndex

__all__ = [
    "AutoFeedbackWarning",
    "GuardAdapter",
    "HttpGuard",
    "Mode",
    "RequestRejected",
    "ResponseRejected",
    "Verdict",
    "Violation",
    "guard_session",
]

Mode = Literal["raise", "warn", "log"]
_MODES = ("raise", "warn", "log")

logger = logging.getLogger("autofeedback")

#: Bodies larger than this are not parsed for checking: a guard must not cost megabytes.
_MAX_CHECKED_BODY = 2 * 1024 * 1024
#: The part of an error response read for its explanation.
_MAX_EXPLAINED_BODY = 64 * 1024


class AutoFeedbackWarning(UserWarning):
    """A request broke the docs (or got an error response) in ``mode="warn"``."""


class RequestRejected(AutoFeedbackError, requests.RequestException):
    """A request broke the docs and was not sent.

    ``findings`` are the scanner's findings, ``feedback`` the text for an LLM
    (:func:`render_feedback`), ``report`` the readable summary (credentials redacted)
    that is also ``str(exc)``; ``request`` is the ``PreparedRequest``.
    """

    def __init__(
        self,
        findings: Sequence[Finding],
        feedback: str,
        report: str,
        *,
        request: requests.PreparedRequest | None = None,
    ) -> None:
        self.findings = tuple(findings)
        self.feedback = feedback
        self.report = report
        requests.RequestException.__init__(self, report, request=request)

    def __str__(self) -> str:
        return self.report


class ResponseRejected(AutoFeedbackError, requests.HTTPError):
    """The server answered with an error status; ``explanation`` is what the docs say
    about it (``None`` when no doc index could be used), ``response`` the response."""

    def __init__(
        self,
        report: str,
        *,
        explanation: Explanation | None,
        response: requests.Response,
    ) -> None:
        self.report = report
        self.explanation = explanation
        requests.HTTPError.__init__(self, report, response=response)

    def __str__(self) -> str:
        return self.report


@dataclass(frozen=True)
class Violation:
    """One request that broke the docs: ``call`` is ``METHOD URL`` (credentials
    redacted), ``operation`` the documented operation it was matched to, if any."""

    call: str
    findings: tuple[Finding, ...]
    operation: str | None = None

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    def report(self) -> str:
        """A few lines a person can act on: the call, then per finding the code, what is
        wrong, the suggestion and the doc line.

        >>> f = Finding("E3.2", ("query", "limt"), "limt", message="unknown query "
        ...     "parameter 'limt'", suggestion="limit", doc="How many books to return.")
        >>> print(Violation("GET http://h/books?limt=5", (f,), "searchBooks").report())
        GET http://h/books?limt=5 (searchBooks) breaks the API docs:
          E3.2 literal variant of a parameter name at query.limt: unknown query parameter 'limt'
            suggestion: limit
            doc: How many books to return.
        """
        target = f" ({self.operation})" if self.operation else ""
        lines = [f"{self.call}{target} breaks the API docs:"]
        for f in self.findings:
            where = ".".join(f.location) or "request"
            lines.append(f"  {f.code} {f.title} at {where}: {f.message}")
            if f.suggestion is not None:
                lines.append(f"    suggestion: {f.suggestion}")
            if f.doc:
                lines.append(f"    doc: {' '.join(f.doc.split())}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Verdict:
    """The one decision on a prepared request (:meth:`HttpGuard.decide`): ``request`` is
    what to send, the one given or, with the certain ``repairs``, a rewritten copy that
    reads back as exactly the repaired call; ``violation`` the errors that remain in
    it (``None``: none); ``findings`` every finding of the request as written (each
    repaired one with its ``fix``); ``call`` is ``METHOD URL`` as sent. Everything
    shown is redacted."""

    request: requests.PreparedRequest
    violation: Violation | None
    repairs: tuple[Repair, ...] = ()
    findings: tuple[Finding, ...] = ()
    call: str = ""

    @property
    def remaining(self) -> tuple[Finding, ...]:
        """The errors left in :attr:`request`."""
        return self.violation.errors if self.violation is not None else ()

    def note(self) -> str:
        """What the user is told of a repaired request: the call as sent and each repair.

        >>> r = Repair("E3.2", ("body", "Qty"), "Qty", "qty")
        >>> Verdict(requests.PreparedRequest(), None, (r,), call="POST http://h/orders").note()
        "POST http://h/orders was sent with the repairs: E3.2 body.Qty: 'Qty' -> 'qty'"
        """
        return f"{self.call} was sent with the repairs: " + "; ".join(map(str, self.repairs))


# -- turning a PreparedRequest into an ApiRequest ---------------------------------------


def _secrets(request: requests.PreparedRequest, names: Iterable[str] = ()) -> list[str]:
    """Credential values the request carries, to blank out of every report."""
    names = frozenset(names)
    found = [
        v for k, v in request.headers.items() if is_sensitive(k, names) and isinstance(v, str) and v
    ]
    found = [p for v in found for p in credential_values(v)]  # "Bearer abc": abc too...
    found += url_secrets(request.url or "", names)
    # longest first, so a token is not left half-redacted by a shorter one inside it
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def _scrub(text: str, secrets: Iterable[str], names: Iterable[str] = ()) -> str:
    return str(redact(text, names=names, secrets=secrets))


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _wants_json(catalog: ApiCatalog, method: str, url: str) -> str | None:
    """The name of the operation ``method url`` calls when it documents a JSON body."""
    match = catalog.match_http(method, url)
    if match is None:
        return None
    op = match[0]
    media = (op.body_media or "application/json").split(";")[0].strip().lower()
    return op.name if op.body_schema is not None and _is_json(media) else None


def _unread(why: str, operation: str | None) -> Finding:
    """The finding for a body the operation documents as JSON that the guard cannot
    read: a guard that cannot check a body must not let it through as if it had."""
    return Finding(
        "E1",
        ("body",),
        None,
        expected="application/json",
        message=f"the request body could not be checked: {why}",
        operation=operation,
    )


def _inflate(data: bytes, coding: str) -> bytes:
    """``data`` decompressed (gzip or deflate), never past the checked-body limit."""
    wbits = 16 + zlib.MAX_WBITS if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(data, _MAX_CHECKED_BODY + 1)
    if len(out) > _MAX_CHECKED_BODY:
        raise ValueError(f"it inflates to more than {_MAX_CHECKED_BODY:,} bytes")
    if not inflater.eof:
        raise ValueError(f"the {coding} stream is truncated")
    return out


def _decode(data: bytes, charset: str | None, json_body: bool) -> str:
    if charset:
        return data.decode(charset)  # LookupError / UnicodeDecodeError: unreadable
    if json_body:  # RFC 8259: UTF-8, or UTF-16/32 told by the first bytes (or a BOM)
        return data.decode(json.detect_encoding(data))
    return data.decode("utf-8", errors="replace")


def _body(
    request: requests.PreparedRequest, operation: str | None = None
) -> tuple[Any, bool, list[Finding]]:
    """The request body as the checks read it, whether it could be read at all, and the
    findings about reading it. ``operation`` names the operation when it documents a JSON
    body: then a body the guard cannot read (a stream, a compression it does not know,
    more than 2 MiB, broken JSON, another media type) is a finding, never a pass."""
    raw = request.body
    if raw is None or raw in (b"", ""):
        return None, True, []
    problems: list[Finding] = []

    def unreadable(why: str) -> tuple[Any, bool, list[Finding]]:
        return None, False, [_unread(why, operation)] if operation else []

    if not isinstance(raw, (bytes, str)):
        return unreadable(
            f"it is a stream ({type(raw).__name__}), which cannot be read without "
            "consuming it; send bytes to have it checked"
        )
    header = request.headers.get("Content-Type") or ""
    ctype = header.split(";")[0].strip().lower()
    charset = next(
        (
            part.split("=", 1)[1].strip().strip('"')
            for part in header.split(";")[1:]
            if part.strip().lower().startswith("charset=")
        ),
        None,
    )
    coding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
    data = raw.encode("utf-8", errors="surrogatepass") if isinstance(raw, str) else raw
    if len(data) > _MAX_CHECKED_BODY and coding == "identity":
        return unreadable(f"it is larger than {_MAX_CHECKED_BODY:,} bytes")
    if coding != "identity":
        if coding not in ("gzip", "x-gzip", "deflate"):
            return unreadable(f"Content-Encoding {coding!r} is not read by the guard")
        try:
            data = _inflate(data, coding)
        except (zlib.error, ValueError) as exc:
            return unreadable(str(exc))
    json_body = _is_json(ctype) or (operation is not None and ctype in ("", "text/plain"))
    try:
        text = (
            raw
            if isinstance(raw, str) and coding == "identity"
            else _decode(data, charset, json_body)
        )
    except (LookupError, UnicodeDecodeError) as exc:
        return unreadable(f"it is not text in {charset or 'UTF-8'} ({type(exc).__name__})")
    if ctype == "multipart/form-data":
        return text, True, []  # read as its parts by the checks (the Content-Type names them)
    if ctype == "application/x-www-form-urlencoded" and not _is_json(ctype):
        form: dict[str, Any] = {}
        for k, v in parse_qsl(text, keep_blank_values=True):
            form.setdefault(k, []).append(v)
        return {k: v[0] if len(v) == 1 else v for k, v in form.items()}, True, []
    if not json_body:
        if operation is not None:
            return unreadable(f"it is sent as {ctype!r}; the operation documents JSON")
        return None, False, []
    if not _is_json(ctype):
        problems.append(
            Finding(
                "E4.1",
                ("header", "Content-Type"),
                ctype or None,
                expected="application/json",
                message=(
                    f"the JSON body is sent as {ctype!r}"
                    if ctype
                    else "the JSON body is sent without a Content-Type"
                )
                + "; servers may not read it as JSON",
                severity="warning",
                operation=operation,
            )
        )
    try:
        return json.loads(text.removeprefix("\ufeff")), True, problems
    except (ValueError, RecursionError) as exc:
        reason = json_reason(exc) if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        if operation is None:
            return None, False, []
        return None, False, [*problems, _unread(f"it is not valid JSON ({reason})", operation)]


def _is_form(request: requests.PreparedRequest) -> bool:
    ctype = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    return ctype == "application/x-www-form-urlencoded"


def _charset(media: str) -> str | None:
    return next(
        (
            part.split("=", 1)[1].strip().strip('"').lower()
            for part in media.split(";")[1:]
            if part.strip().lower().startswith("charset=")
        ),
        None,
    )


def _form_text(value: Any) -> str:
    """A typed form value as text on the wire."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (str, int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _form_pairs(
    request: requests.PreparedRequest, written: Any, fixed: Mapping[str, Any]
) -> list[tuple[str, str]] | None:
    """The form fields of ``fixed`` as text: a value the model wrote keeps its own text
    (under its new name when it was renamed), a repaired one is written as text."""
    if not isinstance(written, Mapping):
        return None
    raw = request.body.decode("utf-8") if isinstance(request.body, bytes) else request.body
    texts: dict[str, list[str]] = {}
    for k, v in parse_qsl(raw or "", keep_blank_values=True):
        texts.setdefault(k, []).append(v)
    pairs: list[tuple[str, str]] = []
    for key, value in fixed.items():
        if key in written and written[key] == value:
            source: str | None = key
        else:  # renamed: the one field the model wrote with this value under another name
            source = next(
                (o for o in written if o not in fixed and written[o] == value and o in texts),
                None,
            )
        if source is not None and source in texts:
            pairs += [(key, t) for t in texts[source]]
        else:
            values = value if isinstance(value, list) else [value]
            pairs += [(key, _form_text(v)) for v in values]
    return pairs


def _same_url(a: str | None, b: str | None) -> bool:
    """Whether two URLs name the same path and query (quoting aside)."""
    x, y = urlsplit(a or ""), urlsplit(b or "")
    return (x.scheme, x.netloc, unquote(x.path)) == (
        y.scheme,
        y.netloc,
        unquote(y.path),
    ) and parse_qsl(x.query, keep_blank_values=True) == parse_qsl(y.query, keep_blank_values=True)


def _typed_form(body: Mapping[str, Any], catalog: ApiCatalog, method: str, url: str) -> Any:
    # form fields are text on the wire; read them as their documented types first
    match = catalog.match_http(method, url)
    if match is None:
        return dict(body)
    op = match[0]
    out: dict[str, Any] = {}
    for k, v in body.items():
        p = op.parameter(k, "body")
        out[k] = deserialize(v, p.schema, p) if p is not None else v
    return out


class HttpGuard:
    """The checks behind :class:`GuardAdapter` and the pytest plugin: which URLs a spec
    covers, what a prepared request breaks, what the docs say about an error response.

    >>> guard = HttpGuard(ApiCatalog([], servers=["http://127.0.0.1:8080"]))
    >>> guard.covers("http://127.0.0.1:8080/books"), guard.covers("https://example.org/")
    (True, False)
    """

    def __init__(
        self,
        spec_or_catalog: SpecLike,
        *,
        base_url: str | None = None,
        allow_hosts: Iterable[str] = (),
        doc_index: DocIndex | None = None,
        retriever: Any = "auto",
        repair: RepairMode = "sure",
    ) -> None:
        catalog = as_catalog(spec_or_catalog)
        check_repair(repair)
        if base_url:
            try:
                netloc = urlsplit(base_url).netloc
                urlsplit(base_url).port  # noqa: B018 - raises on a port out of range
            except ValueError:  # http://[::1
                netloc = ""
            if not netloc:
                raise ConfigurationError(f"base_url must be an absolute URL, got {base_url!r}")
            catalog = ApiCatalog(
                catalog.operations, servers=[base_url, *catalog.servers], source=catalog.source
            )
        self.servers = Origins.of(catalog.servers)
        if not self.servers:
            raise ConfigurationError(
                f"the spec {catalog.source!r} declares no absolute server URL; "
                "pass base_url='https://host/prefix' to say where it is served"
            )
        self.catalog = catalog
        self.scanner = Scanner(catalog, retriever=retriever)
        #: the one decision (:mod:`autofeedback.decide`): with ``repair="sure"`` a request
        #: whose every error has a certain repair is sent repaired (:meth:`repaired`)
        self.decider = Decider(self.scanner, repair=repair)
        self.allowed = self.servers | Origins.of((), extra=allow_hosts)
        self.auth_names = auth_names(catalog)
        self._doc_index = doc_index

    def covers(self, url: str) -> bool:
        """Whether ``url`` goes to one of the spec's servers (same scheme, host, port)."""
        return self.servers.allows(url)

    def allows(self, url: str) -> bool:
        """Whether ``url`` goes to a spec server or an allowlisted origin (a bare
        allowlisted host name allows any port of it)."""
        return self.allowed.allows(url)

    def decide(self, request: requests.PreparedRequest) -> Verdict:
        """The one decision on ``request``: what to send and what to say about it.

        With ``repair="sure"``, a request whose every error has a certain repair (a
        query, form or JSON body key spelled another way, ``"3"`` for an integer in a
        JSON body, a path spelled as documented) is rewritten, read back, and its
        :attr:`Verdict.request` is the rewritten one only when it reads back as exactly
        the repaired call the decision made: what is sent is what the verdict reports.
        Otherwise :attr:`Verdict.request` is ``request`` itself and
        :attr:`Verdict.violation` says what it breaks (``None`` when nothing).

        Never raises on what the request holds: a request that cannot be checked is a
        violation with one E1 finding saying why."""
        try:
            return self._decide(request)
        except (ConfigurationError, SpecError):
            raise
        except Exception as exc:
            secrets = _secrets(request, self.auth_names)
            finding = unreadable(_scrub(f"{request.method} {request.url}", secrets), exc)
            finding = dataclasses.replace(
                finding, message=_scrub(finding.message, secrets, self.auth_names)
            )
            call = _scrub(f"{request.method} {redact_url(request.url or '')}", secrets)
            return Verdict(request, Violation(call, (finding,), None), findings=(finding,))

    def _request(self, request: requests.PreparedRequest) -> tuple[ApiRequest, bool, list[Finding]]:
        """The prepared request as the checks read it, whether its body was readable,
        and the findings about reading the body."""
        method = (request.method or "GET").upper()
        url = request.url or ""
        body, readable, body_findings = _body(request, _wants_json(self.catalog, method, url))
        if isinstance(body, Mapping) and _is_form(request):
            body = _typed_form(body, self.catalog, method, url)
        api_request = ApiRequest(
            method=method,
            url=url,
            headers={str(k): str(v) for k, v in request.headers.items()},
            body=body,
            format="request",
        )
        return api_request, readable, body_findings

    def _decide(self, request: requests.PreparedRequest) -> Verdict:
        method = (request.method or "GET").upper()
        url = request.url or ""
        written, readable, body_findings = self._request(request)
        found = [*body_findings, *self.scanner.iter_findings(written)]
        if not readable:
            # a body we could not read is not a missing body
            found = [f for f in found if not (f.code == "E3.4" and f.location[:1] == ("body",))]
        secrets = _secrets(request, self.auth_names)

        def shown(findings: Iterable[Finding]) -> tuple[Finding, ...]:
            ordered = sorted(findings, key=lambda f: f.severity != "error")
            return tuple(redact_finding(f, names=self.auth_names, secrets=secrets) for f in ordered)

        call = _scrub(f"{method} {redact_url(url, self.auth_names)}", secrets)
        if not any(f.severity == "error" for f in found):
            return Verdict(request, None, findings=shown(found), call=call)
        decided: Decision | None = None
        if self.decider.repair != "off" and readable and not body_findings:
            # decided on a copy: the decision's record of the call as written must stay
            # what was written, whatever the repairer does to the values it is given
            copy = dataclasses.replace(written, body=copy_module.deepcopy(written.body))
            decided = self.decider.from_findings(
                copy, found, lambda r: list(self.scanner.iter_findings(r))
            )
        if decided is not None and decided.action == "forward" and decided.repairs:
            prepared = self._rewrite(request, written, decided.request)
            if prepared is not None:
                sent = prepared.url or ""
                repairs = tuple(
                    redact_repair(r, names=self.auth_names, secrets=secrets)
                    for r in decided.repairs
                )
                return Verdict(
                    prepared,
                    None,
                    repairs=repairs,
                    findings=shown(decided.findings),
                    call=_scrub(f"{method} {redact_url(sent, self.auth_names)}", secrets),
                )
        findings = shown(decided.findings if decided is not None else found)
        match = self.catalog.match_http(method, url)
        violation = Violation(call, findings, match[0].name if match else None)
        return Verdict(request, violation, findings=findings, call=call)

    def _rewrite(
        self,
        request: requests.PreparedRequest,
        written: ApiRequest,
        fixed: ApiRequest | None,
    ) -> requests.PreparedRequest | None:
        """``request`` rewritten as ``fixed`` says (URL, JSON or form body), or ``None``
        when that cannot be done exactly: the rewritten request is read back as the
        checks read it, and must be ``fixed``, nothing more or less."""
        if fixed is None or fixed.headers != written.headers or fixed.params != written.params:
            return None
        prepared = request.copy()
        if fixed.url != written.url:
            prepared.prepare_url(fixed.url, None)
        if fixed.body != written.body:
            coding = (request.headers.get("Content-Encoding") or "identity").strip().lower()
            media = request.headers.get("Content-Type") or ""
            if coding != "identity" or _charset(media) not in (None, "utf-8", "utf8"):
                return None  # rewritten only where it is plain text on the wire
            if _is_form(request) and isinstance(fixed.body, Mapping):
                pairs = _form_pairs(request, written.body, fixed.body)
                if pairs is None:
                    return None
                prepared.prepare_body(data=pairs, files=None)
            elif _is_json(media.split(";")[0].strip().lower()):
                prepared.prepare_body(data=None, files=None, json=fixed.body)
            else:
                return None
            prepared.headers["Content-Type"] = media
        sent, readable, problems = self._request(prepared)
        if not readable or problems or sent.body != fixed.body:
            return None
        if not _same_url(sent.url, fixed.url):
            return None
        return prepared

    # -- responses ---------------------------------------------------------------------

    @property
    def doc_index(self) -> DocIndex:
        """The documentation index error responses are explained from (built on first
        use: it embeds the docs with the packaged model)."""
        if self._doc_index is None:
            from doc_index import DocIndex

            self._doc_index = DocIndex.build(self.catalog)
        return self._doc_index

    def explain(
        self, response: requests.Response, *, read_body: bool = True
    ) -> ResponseRejected | None:
        """:class:`ResponseRejected` for an error response (status 400 and above: a
        redirect is not an error), carrying what the docs say about it. With
        ``read_body=False`` (a ``stream=True`` response, which reading would consume
        behind the caller's back) only the status is explained."""
        if response.status_code < 400:
            return None
        from autofeedback.loop._explain import explain_response

        request = response.request
        method = (request.method or "GET").upper() if request is not None else "GET"
        url = (request.url or "") if request is not None else (response.url or "")
        match = self.catalog.match_http(method, url)
        operation = match[0].name if match else None
        body = response.content[:_MAX_EXPLAINED_BODY] if read_body else None
        sent = self._request(request)[0] if request is not None else None
        explanation = explain_response(
            self.doc_index,
            match[0] if match else None,
            response.status_code,
            body,
            request=sent,
            catalog=self.catalog,
        )
        target = f" ({operation})" if operation else ""
        lines = [f"{method} {redact_url(url)}{target} answered {response.status_code}"]
        if explanation.text:
            lines.append("the docs say:")
            lines.extend(f"  {line}" for line in explanation.text.splitlines())
        # the documented cause, the part of the request, the call to make first
        lines.extend(x for x in explanation.lines() if not x.startswith("Documentation about"))
        report = "\n".join(lines)
        secrets = _secrets(request, self.auth_names) if request is not None else []
        report = _scrub(report, secrets, self.auth_names)
        return ResponseRejected(report, explanation=explanation, response=response)


def rejected(
    violation: Violation, request: requests.PreparedRequest, *, note: str = ""
) -> RequestRejected:
    """The exception for ``violation``; ``note`` is appended to its report."""
    report = _scrub(violation.report(), _secrets(request)) + note
    feedback = _scrub(render_feedback(violation.findings), _secrets(request))
    return RequestRejected(violation.findings, feedback, report, request=request)


def report_problem(
    problem: RequestRejected | ResponseRejected, mode: Mode, *, stacklevel: int = 2
) -> None:
    """Act on a problem as ``mode`` says: raise it, warn with it, or log it."""
    if mode == "raise":
        raise problem
    if mode == "warn":
        warnings.warn(AutoFeedbackWarning(problem.report), stacklevel=stacklevel + 1)
    else:
        logger.warning("%s", problem.report)


class GuardAdapter(HTTPAdapter):
    """A ``requests`` adapter that scans every request against the spec before sending.

    ``mode`` says what a request that breaks the docs does: ``"raise"``
    :class:`RequestRejected` (nothing is sent), ``"warn"`` (an
    :class:`AutoFeedbackWarning`, then it is sent) or ``"log"`` (a warning on the
    ``autofeedback`` logger, credentials redacted, then it is sent). With
    ``repair="sure"`` (the default) a request whose every error has a certain repair is
    sent repaired instead, with a warning on the ``autofeedback`` logger (an
    :class:`AutoFeedbackWarning` in mode ``"warn"``) naming each repair. A request to a host
    that is neither a spec server nor in ``allow_hosts`` raises :class:`HostNotAllowed`
    in every mode. With ``check_responses``, an error response is explained from the docs
    (``doc_index``, or one built from the spec on first use) and raised as
    :class:`ResponseRejected` (mode raise) or reported like a request.

    >>> session = requests.Session()
    >>> session.mount("http://127.0.0.1:8080/", GuardAdapter("bookshop.yaml"))  # doctest: +SKIP
    """

    def __init__(
        self,
        spec_or_catalog: SpecLike,
        mode: Mode = "raise",
        *,
        check_responses: bool = False,
        doc_index: DocIndex | None = None,
        allow_hosts: Iterable[str] = (),
        base_url: str | None = None,
        retriever: Any = "auto",
        repair: RepairMode = "sure",
        **adapter_kwargs: Any,
    ) -> None:
        if mode not in _MODES:
            raise ConfigurationError(f"mode must be one of {', '.join(_MODES)}, not {mode!r}")
        self.guard = HttpGuard(
            spec_or_catalog,
            base_url=base_url,
            allow_hosts=allow_hosts,
            doc_index=doc_index,
            retriever=retriever,
            repair=repair,
        )
        self.mode: Mode = mode
        self.check_responses = check_responses
        super().__init__(**adapter_kwargs)

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float, float] | tuple[float, None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        url = request.url or ""
        # every hop of a redirect comes back through here (requests sends it through
        # the mounted adapter again), so a redirect cannot leave the allowed origins
        if not self.guard.allows(url):
            raise HostNotAllowed(shown_origin(url), list(self.guard.allowed))
        if self.guard.covers(url):
            verdict = self.guard.decide(request)
            if verdict.violation is not None:
                report_problem(rejected(verdict.violation, request), self.mode, stacklevel=4)
            elif verdict.repairs:
                # sent repaired, and said so: never a silent change of a request
                request = verdict.request
                if self.mode == "warn":
                    warnings.warn(AutoFeedbackWarning(verdict.note()), stacklevel=3)
                else:
                    logger.warning("%s", verdict.note())
        response = super().send(
            request, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=proxies
        )
        if self.check_responses and self.guard.covers(url):
            explained = self.guard.explain(response, read_body=not stream)
            if explained is not None:
                report_problem(explained, self.mode, stacklevel=4)
        return response


def guard_session(
    session: requests.Session,
    spec_or_catalog: SpecLike,
    mode: Mode = "raise",
    **options: Any,
) -> GuardAdapter:
    """Mount one :class:`GuardAdapter` on every prefix of ``session`` (``http://``,
    ``https://`` and any more specific prefix already mounted, which would otherwise win),
    so no request leaves unchecked. Returns the adapter; ``options`` are its keywords.

    >>> session = guard_session(requests.Session(), "bookshop.yaml")  # doctest: +SKIP
    """
    adapter = GuardAdapter(spec_or_catalog, mode, **options)
    for prefix in [*session.adapters, "http://", "https://"]:
        session.mount(prefix, adapter)
    return adapter
