"""The Static Scanning Component: parse -> resolve the API -> check names -> check
parameters -> check values, in the paper's order (E1 -> E2 -> E3 -> E4).

:meth:`Scanner.iter_findings` yields every finding (for audits);
:meth:`Scanner.scan` returns the one to feed back first (for the loop).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import (
    CONFIDENT_MARGIN,
    WARN_MARGIN,
    ApiRanker,
    check_name,
    check_selection,
)
from autofeedback.checks._check_params import check_parameters
from autofeedback.checks._check_values import accepts, check_body, check_value, composed_body
from autofeedback.checks._names import NameMatcher, Scored
from autofeedback.checks._object_body import check_object_body
from autofeedback.checks._object_queries import fold_object_queries
from autofeedback.checks._whole_body import check_whole_body
from autofeedback.core._exceptions import ConfigurationError, SpecError
from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest, Operation, Output
from autofeedback.core._patterns import PatternBudget
from autofeedback.core._redact import auth_names, redact_finding, request_secrets
from autofeedback.core._resolve import request_args

if TYPE_CHECKING:
    from autofeedback.flow._sequence import Sequence as Steps
    from autofeedback.scanner._sequences import _Graph

__all__ = [
    "Output",
    "Scanner",
    "check_sequence",
    "first_finding",
    "is_program",
    "iter_findings",
    "one_line",
    "scan",
    "unreadable",
]


class _Retriever(ApiRanker, NameMatcher):
    pass


#: A comparison with this many candidates or more (a big catalog's API names or
#: endpoints) has the whole catalog's names embedded at once (``preload_names``); a
#: smaller one (one operation's parameters) embeds only its own names: an unknown
#: parameter of a 2,034-operation spec embedded 2,650 names for 5 candidates.
_PRELOAD_FROM = 64


class _PreloadingMatcher(_Retriever):
    """A scanner's retriever that embeds the catalog's names (``preload_names``) on the
    first comparison with many candidates: lazily, so the first answer does not wait
    for them, and only when a comparison needs that many."""

    def __init__(self, scanner: Scanner, retriever: _Retriever) -> None:
        self._scanner = scanner
        self._retriever = retriever

    def name_similarity(self, name: str, candidates: Sequence[str]) -> Sequence[Scored]:
        scanner = self._scanner
        if not scanner._names_loaded and len(candidates) >= _PRELOAD_FROM:
            preload = getattr(self._retriever, "preload_names", None)
            if callable(preload):
                preload(scanner.catalog)
            scanner._names_loaded = True
        return self._retriever.name_similarity(name, candidates)

    def rank(self, instruction: str, catalog: ApiCatalog, k: int | None = None) -> Sequence[Scored]:
        return self._retriever.rank(instruction, catalog, k)


class Scanner:
    """Checks LLM requests against one catalog.

    ``retriever`` gives the semantic checks (E2.1, E2.3, E3.3): ``"auto"`` (default)
    creates the packaged-MiniLM :class:`retriever.ApiRetriever` the first time a check
    needs it, so well-formed calls never load a model; ``None`` runs the structural
    checks only (unknown names are then plain E2/E3 with a spelling suggestion).

    >>> catalog = ApiCatalog.from_tools([{"name": "get_weather", "parameters": {
    ...     "type": "object", "properties": {"city": {"type": "string"}}}}])
    >>> Scanner(catalog, retriever=None).scan("get_weather(City='Paris')").code
    'E3.2'
    """

    def __init__(
        self,
        catalog: ApiCatalog,
        *,
        retriever: Any = "auto",
        threshold: float = 0.5,
        top_k: int = 1,
        confident_margin: float = CONFIDENT_MARGIN,
        warn_margin: float = WARN_MARGIN,
    ) -> None:
        self.catalog = catalog
        self._retriever = retriever
        self._names_loaded = False
        self._preloading: _PreloadingMatcher | None = None
        self.threshold = threshold
        self.top_k = top_k
        self.confident_margin = confident_margin
        self.warn_margin = warn_margin
        self._auth_names = auth_names(catalog)
        self._graph = _LazyGraph(catalog)
        # scanners of this catalog plus the tools a dialogue's tool search found, by the
        # tools found (bounded: a long audit meets a few distinct searches, not thousands)
        self._with_found: dict[tuple[str, ...], Scanner] = {}
        self._reads_dialogue = True

    @property
    def retriever(self) -> _Retriever | None:
        if self._retriever == "auto":
            self._retriever = default_retriever()
        return self._retriever  # type: ignore[no-any-return]

    @property
    def _matcher(self) -> _Retriever | None:
        """The retriever as the name checks (E2.3, E3.3) use it. The catalog's names are
        embedded (once, cached on disk) on the first request that needs a semantic name
        comparison, not before the first answer: a request with right names needs no
        embedding at all, whatever the size of the spec."""
        retriever = self.retriever
        if retriever is not None and not self._names_loaded:
            # one per scanner: the E2 verdicts of HTTP requests are kept per matcher, and
            # a new one per request made every repeated mistake worked out again
            if self._preloading is None:
                self._preloading = _PreloadingMatcher(self, retriever)
            return self._preloading
        return retriever

    # -- entry points ---------------------------------------------------------------

    def iter_findings(
        self,
        output: Output,
        *,
        instruction: str | None = None,
        context: str | None = None,
        on_error: Literal["finding", "raise"] = "finding",
    ) -> Iterator[Finding]:
        """Every finding for every request in ``output``, in the paper's order per request.

        Never raises on model output: whatever breaks while reading or checking it
        becomes an E1 finding (only a bad spec or configuration raises); with
        ``on_error="raise"`` it is raised instead, for callers that report it their own
        way (the audit's per-record ``error``). ``context``: the whole request when
        ``instruction`` is only its latest part (see :func:`check_selection`). Every
        finding is redacted (:func:`autofeedback.core._redact.redact_finding`): credentials
        the request carried never reach ``got``, ``expected`` or ``message``.
        """
        names = self._auth_names
        secrets: list[str] = []
        found = self._dialogue_scanner(output, instruction, context)
        if found is not self:
            # a tool search in the dialogue documented tools: they are callable now
            yield from found.iter_findings(
                output, instruction=instruction, context=context, on_error=on_error
            )
            return
        try:
            if isinstance(output, str) and is_program(output):
                # calls that read each other's results: checked as one sequence (E5)
                yield from self._program_findings(output, instruction, context)
                return
            from autofeedback._parse._output import to_requests

            requests, problem = to_requests(output)
            if problem is not None:
                yield redact_finding(problem, names=names)
                return
            for i, request in enumerate(requests):
                prefix = (f"request[{i}]",) if len(requests) > 1 else ()
                secrets = []  # the request's credentials, found once it has a finding
                found_secrets = False
                for f in self.check_request(
                    request, instruction=instruction, calls=len(requests), context=context
                ):
                    if not found_secrets:
                        secrets, found_secrets = request_secrets(request, names), True
                    if prefix:
                        f = dataclasses.replace(f, location=prefix + f.location)
                    yield redact_finding(f, names=names, secrets=secrets)
        except (ConfigurationError, SpecError):
            raise  # misuse, not model output: the caller must see it
        except Exception as exc:  # any other failure is this output's own E1 finding
            if on_error == "raise":
                raise
            yield redact_finding(unreadable(output, exc), names=names, secrets=secrets)

    def _dialogue_scanner(
        self, output: Output | None, instruction: str | None, context: str | None
    ) -> Scanner:
        """This scanner, or one whose catalog also holds the tools that a tool search in
        the dialogue documented: an API-Bank ``API-Request: [ToolSearcher(...)]->[...]``
        result or a ReAct ``Observation:`` holding a tool's description, in the
        instruction or the context (see :mod:`autofeedback.flow._tools`). Never in the
        output being checked: a model that writes its own Observation documenting a
        tool has made that tool up."""
        if not self._reads_dialogue:
            return self
        texts = [t for t in (instruction, context) if isinstance(t, str) and t]
        if not any("->" in t or "bservation" in t for t in texts):
            return self  # cheap: no result shown, no tool found
        from autofeedback.flow._tools import tools_in_text

        found = tools_in_text(*texts)
        if found is None or all(name in self.catalog for name in found.names):
            return self
        key = (found.fingerprint,)
        hit = self._with_found.get(key)
        if hit is None:
            if len(self._with_found) >= 16:
                self._with_found.clear()
            hit = Scanner(
                ApiCatalog.merge(self.catalog, found),
                retriever=self._retriever,
                threshold=self.threshold,
                top_k=self.top_k,
                confident_margin=self.confident_margin,
                warn_margin=self.warn_margin,
            )
            hit._reads_dialogue = False  # its catalog holds them already
            self._with_found[key] = hit
        return hit

    def _program_findings(
        self, text: str, instruction: str | None, context: str | None
    ) -> Iterator[Finding]:
        from autofeedback.flow._sequence import sequence_from_program

        checker = self.sequence_checker()
        seq = sequence_from_program(text, instruction=instruction, dialogue=context or "")
        yield from checker.iter_findings(seq)

    def for_catalog(self, catalog: ApiCatalog) -> Scanner:
        """A scanner of ``catalog`` with this one's retriever (and the default
        thresholds): a sequence's catalog grows with the tools its steps found."""
        return Scanner(catalog, retriever=self._retriever)

    def sequence_checker(self) -> Any:
        """The :class:`autofeedback.sequences.SequenceChecker` of this scanner's catalog and its
        data-flow graph (made once): how a program or trace is checked."""
        from autofeedback.scanner._sequences import SequenceChecker

        checker = self.__dict__.get("_sequence_checker")
        if checker is None:
            checker = self.__dict__["_sequence_checker"] = SequenceChecker(self, graph=self._graph)
        return checker

    def scan(self, output: Output, *, instruction: str | None = None) -> Finding | None:
        """The finding to feed back first: the first error in the paper's order, else the
        first warning, else ``None``."""
        return first_finding(list(self.iter_findings(output, instruction=instruction)))

    def check_request(
        self,
        request: ApiRequest,
        *,
        instruction: str | None = None,
        calls: int = 1,
        context: str | None = None,
    ) -> Iterator[Finding]:
        """E2 -> E3 -> E4 for one parsed request."""
        if request.double_encoded:
            yield Finding(
                "E4.1",
                ("arguments",),
                json.dumps(json.dumps(dict(request.arguments), default=str)),
                expected="object",
                message="the arguments are a JSON string holding the JSON object (encoded "
                "twice); send the object itself",
            )
        semantic = self._semantic_needed(request)
        matcher = self._matcher if semantic else None
        named = check_name(request, self.catalog, matcher=matcher, threshold=self.threshold)
        yield from named.findings
        op = named.operation
        if op is None:
            likely = named.likely
            if likely is not None and not request.is_http:
                # the name is one documented API's in other words: its arguments are
                # judged against that API now, not one feedback round later
                renamed = dataclasses.replace(request, name=likely.name)
                yield from self.check_operation(likely, renamed, instruction=instruction)
            return
        selection = None
        if instruction and len(self.catalog) > 1 and self.retriever is not None:
            selection = check_selection(
                op,
                instruction,
                self.catalog,
                self.retriever,
                top_k=max(self.top_k, calls),
                confident_margin=self.confident_margin,
                warn_margin=self.warn_margin,
                context=context,
            )
        judged, twins = op, self.catalog.twins(op)
        if len(twins) > 1:
            # one endpoint documented as several operations: judge the request against
            # the one it fits best (fewest errors; the router's choice on a tie). An
            # unknown name is one error whether or not the closest names are searched
            # with the model, so the twins are compared without that search (it loaded
            # the embedding model for twins never chosen), and the one chosen is then
            # checked as any operation is.
            errors = [
                sum(
                    f.severity == "error"
                    for f in self.check_operation(
                        t, request, named.path_params, instruction=instruction, semantic=False
                    )
                )
                for t in twins
            ]
            judged = twins[errors.index(min(errors))]
        checked: Iterable[Finding] = list(
            self.check_operation(judged, request, named.path_params, instruction=instruction)
        )
        if selection is not None and not (self.leads_to(op, selection) and not _malformed(checked)):
            # a step towards the better API is no wrong API when it is a call of its own
            # API (GetUserToken(username, password)), not one with the arguments of the
            # API the user asked for (GetUserToken(token=...))
            yield selection
        if not instruction:
            yield from checked
            return
        grounding = list(
            self.check_grounding(op, request, named.path_params, instruction, context=context)
        )
        # a placeholder (`<order_id>`) is no value: "call createOrder first" says more
        # than its type or pattern error, which is left out
        stand_ins = {f.location[1] for f in grounding if f.severity == "error"}
        for f in checked:
            if f.code.startswith("E4") and len(f.location) > 1 and f.location[1] in stand_ins:
                continue
            yield f
        yield from grounding

    def leads_to(self, op: Operation, selection: Finding) -> bool:
        """Whether ``op`` is a step towards an API that fits the instruction better (an
        E2.1 ``selection``'s suggestion and the others it ranks first): its response
        gives a required input of that API, as the data-flow graph knows producers
        (``GetUserToken`` before ``DeleteAgenda(token=...)``; a search before the
        details of what it finds). Such a call is a prerequisite, not the wrong API.

        >>> catalog = ApiCatalog.from_tools([
        ...     {"name": "signIn", "parameters": {"type": "object", "properties": {}},
        ...      "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}}},
        ...     {"name": "deleteAgenda", "parameters": {"type": "object", "required": ["token"],
        ...      "properties": {"token": {"type": "string"}}}}])
        >>> e21 = Finding("E2.1", ("api",), "signIn", suggestion="deleteAgenda")
        >>> Scanner(catalog, retriever=None).leads_to(catalog.get("signIn"), e21)
        True
        """
        targets = [selection.suggestion]
        if isinstance(selection.expected, (list, tuple)):
            targets.extend(selection.expected)
        for name in dict.fromkeys(t for t in targets if isinstance(t, str)):
            target = self.catalog.get(name)
            if target is None or target.name == op.name:
                continue
            for param in target.parameters:
                if not param.required:
                    continue
                producers = self._graph.producers(target.name, param.name)
                if any(
                    p.operation == op.name and getattr(p, "via", "") != "weak" for p in producers
                ):
                    return True
        return False

    def check_operation(
        self,
        op: Operation,
        request: ApiRequest,
        path_params: Mapping[str, str] | None = None,
        *,
        instruction: str | None = None,
        semantic: bool = True,
    ) -> Iterator[Finding]:
        """E3 and E4 for a request already known to target ``op``. ``semantic=False``:
        an unknown name's closest documented names are looked for by spelling only (the
        same findings, and errors, with other suggestions and codes)."""
        # the call's time for patterns RE2 cannot run, one budget for all of its values
        budget = PatternBudget.current() or PatternBudget()
        if not request.is_http and accepts(op, request.arguments, budget):
            return  # the whole call fits the documented parameters: nothing to report
        args = fold_object_queries(op, request_args(request, path_params))
        needs_matcher = semantic and any(
            op.parameter(a.name) is None for a in args if a.location not in ("header", "cookie")
        )
        matcher = self._matcher if needs_matcher else None
        body_sent = request.body not in (None, "", b"") if request.is_http else None
        params = check_parameters(
            op,
            args,
            self.catalog,
            matcher=matcher,
            threshold=self.threshold,
            body_sent=body_sent,
            instruction=instruction,
            ranker=matcher,
        )
        yield from params.findings
        matched = list(params.matched)
        if composed_body(op):
            body = [(a, p) for a, p in matched if p.location == "body"]
            yield from check_body(op, body, budget)
            matched = [(a, p) for a, p in matched if p.location != "body"]
        for arg, param in matched:
            yield from check_value(op, arg, param, budget)
        yield from check_object_body(op, args, bool(body_sent), budget)
        if request.is_http:
            yield from check_whole_body(op, request, budget)

    def check_grounding(
        self,
        op: Operation,
        request: ApiRequest,
        path_params: Mapping[str, str] | None,
        instruction: str,
        *,
        context: str | None = None,
    ) -> Iterator[Finding]:
        """E5.3 for one call: a placeholder (``your_token_here``, ``<tv_id>``), or an
        identifier-, key- or credential-like value that neither the instruction nor the
        ``context`` (the rest of what the model saw: a system prompt, earlier turns)
        gives although an operation of the catalog produces it (the data-flow graph says
        which: the feedback names it)."""
        from autofeedback.scanner._sequences import ground_call

        if request.is_http:
            args = {
                a.name: a.value
                for a in request_args(request, path_params)
                if a.location not in ("header", "cookie")
            }
        else:
            args = dict(request.arguments)
        if args:
            yield from ground_call(
                op,
                args,
                instruction=instruction,
                graph=self._graph,
                catalog=self.catalog,
                context=context,
            )

    def _semantic_needed(self, request: ApiRequest) -> bool:
        if request.is_http:
            assert request.method is not None and request.url is not None
            return self.catalog.match_http(request.method, request.url) is None
        return (request.name or "") not in self.catalog


def _malformed(findings: Iterable[Finding]) -> bool:
    """Whether a call's own findings hold a parameter or value error (E3, E4)."""
    return any(f.severity == "error" and f.code[:2] in ("E3", "E4") for f in findings)


class _LazyGraph:
    """The catalog's data-flow graph (:class:`autofeedback.flow.FlowGraph`), built on the
    first look-up: most calls never need it."""

    def __init__(self, catalog: ApiCatalog) -> None:
        self._catalog = catalog
        self._graph: Any = None

    def _build(self) -> Any:
        from autofeedback.flow._graph import FlowGraph

        return FlowGraph.from_catalog(self._catalog)

    def producers(self, operation: str, parameter: str) -> list[Any]:
        if self._graph is None:
            self._graph = self._build()
        return list(self._graph.producers(operation, parameter))

    def response_schema(self, operation: str) -> Any:
        if self._graph is None:
            self._graph = self._build()
        return self._graph.response_schema(operation)


def first_finding(findings: Sequence[Finding]) -> Finding | None:
    """The first error, else the first warning, else ``None``: what to feed back first."""
    errors = [f for f in findings if f.severity == "error"]
    ordered = errors or findings
    return ordered[0] if ordered else None


def unreadable(output: Any, exc: BaseException) -> Finding:
    """The E1 finding for an output whose reading or checking failed with ``exc``: one
    line naming the error, never a traceback.

    >>> unreadable("GET /x", ValueError("Invalid IPv6 URL")).message
    'the output could not be checked: ValueError: Invalid IPv6 URL'
    """
    from autofeedback._parse._output import excerpt

    return Finding(
        "E1", (), excerpt(output), message=f"the output could not be checked: {one_line(exc)}"
    )


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``Type: message`` of an exception on one line, cut at ``limit`` characters."""
    try:
        text = str(exc)
    except Exception:  # a broken __str__ must not break the report of the error
        text = ""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def is_program(text: str) -> bool:
    """Whether ``text`` is a program whose calls read each other's results
    (``r = F(q="x")`` then ``G(id=r.items[0].id)``): a sequence, not one request."""
    if "=" not in text or "\n" not in text.strip() or "." not in text:
        return False  # cheap: one line, or no attribute read at all
    from autofeedback.flow._program import UNREAD_CALL, Derived, Ref, Unbound, parse_program

    try:
        calls, problems = parse_program(text)
    except Exception:
        return False
    if calls and any(p.message.startswith(UNREAD_CALL) for p in problems):
        # a call written inside an expression (x = 1 + F(...)): code no step reads, never
        # passed over as prose
        return True
    if len(calls) < 2:
        return False  # a line that cannot be read is that line's E1 in the sequence
    # a name read that no readable line binds, beside a line that cannot be read: the
    # assignment was on that line (``y = b.x.x...`` 400 levels deep), a program still
    kinds = (Ref, Derived, Unbound) if problems else (Ref, Derived)
    return any(isinstance(v, kinds) for c in calls for v in (*c.arguments.values(), *c.positional))


_default: weakref.WeakKeyDictionary[ApiCatalog, Scanner] = weakref.WeakKeyDictionary()
_retrievers: dict[str, Any] = {}
_retrievers_lock = threading.Lock()


def default_retriever() -> Any:
    """The process's :class:`retriever.ApiRetriever` for ``retriever="auto"``, one per
    cache folder: every scanner shares its name vectors, so a log of many tool lists
    embeds a name it repeats once (each scanner made its own before, and re-embedded).

    >>> default_retriever() is default_retriever()  # doctest: +SKIP
    True
    """
    from autofeedback.core._cache import default_cache_dir

    key = str(default_cache_dir())
    with _retrievers_lock:
        found = _retrievers.get(key)
        if found is None:
            from retriever import ApiRetriever

            found = _retrievers[key] = ApiRetriever()
        return found


def _scanner(catalog: ApiCatalog, retriever: Any) -> Scanner:
    if retriever != "auto":
        return Scanner(catalog, retriever=retriever)
    hit = _default.get(catalog)
    if hit is None:
        hit = _default[catalog] = Scanner(catalog)
    return hit


def iter_findings(
    output: Output, catalog: ApiCatalog, *, instruction: str | None = None, retriever: Any = "auto"
) -> Iterator[Finding]:
    """Every finding for ``output`` against ``catalog`` (see :class:`Scanner`)."""
    return _scanner(catalog, retriever).iter_findings(output, instruction=instruction)


def scan(
    output: Output, catalog: ApiCatalog, *, instruction: str | None = None, retriever: Any = "auto"
) -> Finding | None:
    """The first finding for ``output`` in the paper's order, or ``None`` when it is clean.

    >>> catalog = ApiCatalog.from_tools([{"name": "userLogin", "parameters": {
    ...     "type": "object", "properties": {}}}])
    >>> scan("<API>user_login()</API>", catalog, retriever=None).code
    'E2.2'
    """
    return _scanner(catalog, retriever).scan(output, instruction=instruction)


def check_sequence(
    seq: Steps,
    catalog: ApiCatalog,
    *,
    graph: _Graph | None = None,
    responses: Mapping[str, Mapping[str, Any]] | None = None,
    retriever: Any = "auto",
) -> list[Finding]:
    """Every finding of a sequence against ``catalog`` (see :class:`SequenceChecker`).

    >>> from autofeedback.flow._sequence import sequence_from_program
    >>> catalog = ApiCatalog.from_tools([{"name": "get", "parameters": {"type": "object",
    ...     "properties": {"id": {"type": "string"}}}}])
    >>> [f.code for f in check_sequence(sequence_from_program("get(id=r.id)"), catalog,
    ...                                 retriever=None)]
    ['E5.1']
    """
    from autofeedback.scanner._sequences import SequenceChecker

    checker = SequenceChecker(
        Scanner(catalog, retriever=retriever), graph=graph, responses=responses
    )
    return checker.check(seq)
