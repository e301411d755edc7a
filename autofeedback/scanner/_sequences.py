"""The data-flow checks (E5) and the per-step E1-E4 checks of a sequence.

Per step, in order:

1. the step's own E1-E4 findings, exactly as :class:`~autofeedback.scanner._scan.Scanner` gives them
   for one call, with the values that come from earlier responses left out of the value
   checks (their documented type is judged by E5.4 instead) and never reported missing;
2. E5.1 for a value read from a variable nothing earlier assigned;
3. E5.2 for a reference path the producer's documented response lacks (closest path as
   the suggestion), E5.4 for a referenced field whose documented type does not fit;
4. E5.3 for a literal identifier-, key- or credential-like value grounded nowhere
   (instruction, dialogue, earlier responses, enum/default/example), or a placeholder.

E2.1 is asked of the sequence, not of each step: a search that feeds a detail call is a
prerequisite, not a wrong API, so only the step that ranks best for the instruction is
compared with the retriever's choice. Tools that an earlier response documents (a
tool-search result, an MCP ``tools/list`` answer, structured or as text) join the catalog
for the later steps, and so do those a search shown in the dialogue's own text found
(an API-Bank ``->`` result, a ReAct ``Observation:``; see :mod:`autofeedback.flow._tools`).
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping
from collections.abc import Sequence as CollectionSequence
from typing import TYPE_CHECKING, Any, Protocol

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import check_selection, destructive
from autofeedback.checks._words import no_side_effects
from autofeedback.core._findings import Finding, Severity
from autofeedback.core._model import ApiRequest, Operation, Parameter
from autofeedback.core._redact import redact_finding, request_secrets
from autofeedback.flow._grounding import grounded, is_id_like, placeholder_kind, response_values
from autofeedback.flow._program import Derived, Ref, Unbound, path_text
from autofeedback.flow._sequence import Sequence, Step
from autofeedback.flow._tools import documented_tools, with_tools_in_text

if TYPE_CHECKING:  # the scanner imports this module: a scanner is handed in
    from autofeedback.scanner._scan import Scanner

__all__ = [
    "SequenceChecker",
    "check_next_calls",
    "check_next_requests",
    "ground_call",
    "has_tool_steps",
]


class _Producer(Protocol):
    operation: str
    path: str


class _Graph(Protocol):
    def producers(self, operation: str, parameter: str) -> list[Any]: ...

    def response_schema(self, operation: str) -> Mapping[str, Any] | None: ...


_SCALARS = frozenset({"string", "integer", "number", "boolean"})
#: what a value read from an earlier response is, to the E1-E4 checks of its call
_FROM_RESPONSE = "<from an earlier response>"


class SequenceChecker:
    """Checks sequences against one catalog (and its data-flow graph).

    ``graph`` answers which operations produce a parameter and what each operation
    returns (:class:`autofeedback.flow.FlowGraph`); ``responses`` adds or overrides
    response schemas by operation name (a GraphQL-RestBench sample's own schema).

    >>> from autofeedback.flow._graph import FlowGraph
    >>> from autofeedback.flow._sequence import sequence_from_program
    >>> catalog = ApiCatalog.from_tools([
    ...     {"name": "find", "parameters": {"type": "object", "properties": {}},
    ...      "outputSchema": {"type": "object", "properties": {"items": {"type": "array",
    ...          "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}},
    ...     {"name": "get", "parameters": {"type": "object", "properties": {
    ...         "item_id": {"type": "string"}}}}])
    >>> from autofeedback.scanner._scan import Scanner
    >>> checker = SequenceChecker(Scanner(catalog, retriever=None),
    ...                           graph=FlowGraph.from_catalog(catalog))
    >>> [f.suggestion for f in checker.check(sequence_from_program(
    ...     "r = find()\\nget(item_id=r.item[0].id)"))]
    ['items[].id']
    """

    def __init__(
        self,
        scanner: Scanner,
        *,
        graph: _Graph | None = None,
        responses: Mapping[str, Mapping[str, Any]] | None = None,
        confident_margin: float = 0.35,
    ) -> None:
        self.scanner = scanner
        #: E2.1 of a sequence is an error only when the best API beats the sequence's
        #: closest step by this much (else a warning): higher than a single call's 0.25,
        #: measured on gold sequences (benchmarks/sequences.py)
        self.confident_margin = confident_margin
        self.graph = graph
        self.responses = dict(responses or {})
        # (producer, path) -> the documented schema there: programs repeat their paths
        self._paths: dict[tuple[str, tuple[str, ...]], Mapping[str, Any] | None] = {}

    # -- look-ups ------------------------------------------------------------------

    def response_schema(self, operation: str) -> Mapping[str, Any] | None:
        hit = self.responses.get(operation)
        if hit is not None:
            return hit
        return self.graph.response_schema(operation) if self.graph is not None else None

    def producers(self, operation: str, parameter: str) -> list[Any]:
        if self.graph is None:
            return []
        try:
            return list(self.graph.producers(operation, parameter))
        except KeyError:
            return []

    # -- entry point ---------------------------------------------------------------

    def iter_findings(self, seq: Sequence) -> Iterator[Finding]:
        """Every finding of every step, each located under ``step[i]``."""
        yield from seq.problems
        scanner = self.scanner
        texts = [t for t in (seq.instruction, seq.dialogue) if t]
        # tools a tool search in the dialogue's own text found (an API-Bank `->` result,
        # a ReAct Observation) are callable from the first step on
        known = with_tools_in_text(scanner.catalog, *texts)
        if known is not scanner.catalog:
            scanner = self.scanner.for_catalog(known)
        seen: set[str] = set()
        names = {step.index: step.name for step in seq.steps}
        consumed = {ref.step for step in seq.steps if step.call is not None for ref in _refs(step)}
        # the operations called before the current step, grown step by step: rebuilding
        # it per step made a 40,000-entry HAR session quadratic (65 s)
        called: set[str] = set()
        malformed: set[int] = set()  # steps with a parameter or value error (E3, E4)
        for step in seq.steps:
            where = (f"step[{step.index}]",)
            if step.problem is not None:
                yield _under(step.problem, where)
            elif step.request is not None:
                auth = scanner._auth_names
                secrets: list[str] | None = None  # found once the step has a finding
                for f in self._step_findings(scanner, step, texts, seen, names, called):
                    if secrets is None:
                        secrets = request_secrets(step.request, auth)
                    if f.severity == "error" and f.code[:2] in ("E3", "E4"):
                        malformed.add(step.index)
                    yield redact_finding(_under(f, where), names=auth, secrets=secrets)
            name = names.get(step.index)
            if not name and step.request is not None and step.request.is_http:
                # an HTTP step (a HAR entry) is a call of the operation it reaches
                op = _operation(scanner.catalog, step.request)
                name = op.name if op is not None else None
            if name:
                called.add(name)
            if step.response is not None:
                seen.update(response_values(step.response.body))
                if isinstance(step.response.body, str):
                    # a result in words ("Created evt_abc123 in your calendar"): the
                    # model read it, as it read the user's turns
                    texts.append(step.response.body)
                found = documented_tools(step.response.body)
                if found is not None:
                    merged = ApiCatalog.merge(scanner.catalog, found)
                    scanner = self.scanner.for_catalog(merged)
        selection = self._selection(scanner, seq, consumed, malformed)
        if selection is not None:
            yield selection

    def check(self, seq: Sequence) -> list[Finding]:
        """:meth:`iter_findings` as a list."""
        return list(self.iter_findings(seq))

    def catalog_at(self, seq: Sequence, index: int) -> ApiCatalog:
        """The catalog step ``index`` of ``seq`` is judged against: the scanner's, with
        the tools the dialogue's own text and the responses before that step document
        (a tool search), as :meth:`iter_findings` joins them."""
        texts = [t for t in (seq.instruction, seq.dialogue) if t]
        catalog = with_tools_in_text(self.scanner.catalog, *texts)
        for step in seq.steps[:index]:
            if step.response is not None:
                found = documented_tools(step.response.body)
                if found is not None:
                    catalog = ApiCatalog.merge(catalog, found)
        return catalog

    # -- one step ------------------------------------------------------------------

    def _step_findings(
        self,
        scanner: Scanner,
        step: Step,
        texts: list[str],
        seen: set[str],
        names: Mapping[int, str | None],
        called: Collection[str],
    ) -> Iterator[Finding]:
        request = step.request
        assert request is not None
        call = step.call
        op = _operation(scanner.catalog, request)
        from_refs: set[str] = set()
        positional: dict[str, Any] = {}
        if call is not None:
            if call.positional and op is not None:
                free = [p for p in op.parameters if p.name not in call.arguments]
                positional = {p.name: v for p, v in zip(free, call.positional, strict=False)}
            every = {**positional, **call.arguments}
            from_refs = {k for k, v in every.items() if not _literal(v)}
            literal = {k: v for k, v in every.items() if _literal(v)}
            if (
                op is not None
                and all(op.parameter(k) is not None for k in every)
                and not (from_refs and (op.whole_arguments or op.body_schema))
            ):
                # documented names: only the literal values need the E1-E4 checks (and
                # the call's fast path usually takes them); with an unknown name, the
                # names given by reference must be there too, or an unknown one would be
                # told to become one of them; so must they where the arguments are
                # judged together, a tool's as a whole (dependentRequired: limit needs
                # offset, given as p.next_offset) or a request body's (the oneOf branch
                # that requires offset)
                request = ApiRequest(name=call.name, arguments=literal, format="python")
            else:
                # every name goes to the name checks (E3); a value read from a response
                # goes in as a stand-in whose value findings are dropped (E5.2/E5.4 judge it)
                request = ApiRequest(
                    name=call.name,
                    arguments={
                        k: (v if k in literal else _FROM_RESPONSE) for k, v in every.items()
                    },
                    format="python",
                    raw=call.text,
                )
        grounding: list[Finding] = []
        if op is not None:
            for name, value in _literal_args(request, op, scanner.catalog):
                param = op.parameter(name)
                if param is not None and name not in from_refs:
                    grounding.extend(self._grounding(op, param, value, texts, seen, called))
        # a placeholder is no value: its E5.3 ("call X first") says more than its E4; a
        # value that is grounded (an id `0` an earlier response returned) keeps its E4
        stand_ins = {f.location[1] for f in grounding if len(f.location) > 1}
        for f in scanner.check_request(request, instruction=None):
            loc = f.location[1] if f.code.startswith("E4") and len(f.location) > 1 else None
            if loc is not None and (loc in from_refs or loc in stand_ins):
                continue
            if f.code == "E3.4" and f.suggestion in from_refs:
                continue  # given by reference: present, judged below
            yield f
        if op is None:
            return
        if call is not None:
            for name, value in {**positional, **call.arguments}.items():
                if not _literal(value):
                    yield from self._reference(op, name, value, names)
        yield from grounding

    def _reference(
        self, op: Operation, name: str, value: Any, names: Mapping[int, str | None]
    ) -> Iterator[Finding]:
        param = op.parameter(name)
        loc = (param.location if param is not None else "argument", name)
        parts = value.parts if isinstance(value, Derived) else (value,)
        for part in parts:
            if isinstance(part, Unbound):
                # a producer is named for identifiers only: a made-up `type` or `query`
                # comes from the user, not from another call
                producers = (
                    self.producers(op.name, name) if param is not None and is_id_like(param) else []
                )
                hint = producers[0].operation if producers else None
                message = f"{part.name!r} is not the result of an earlier call"
                if hint:
                    message += f"; {hint} produces {name!r}"
                yield Finding(
                    "E5.1",
                    loc,
                    part.text or part.name,
                    suggestion=hint,
                    message=message,
                    operation=op.name,
                )
                continue
            yield from self._path(
                op, name, param, part, whole=not isinstance(value, Derived), names=names
            )

    def _path(
        self,
        op: Operation,
        name: str,
        param: Parameter | None,
        ref: Ref,
        *,
        whole: bool,
        names: Mapping[int, str | None],
    ) -> Iterator[Finding]:
        loc = (param.location if param is not None else "argument", name)
        producer = names.get(ref.step)
        schema = self.response_schema(producer) if producer else None
        if schema is None:
            return  # nothing documents what the producer returns: nothing to judge
        from autofeedback.flow._paths import closest_path, schema_at, schema_types

        shown = path_text(ref.path)
        key = (producer or "", ref.path)
        if key in self._paths:
            at = self._paths[key]
        else:
            at = self._paths[key] = schema_at(schema, list(ref.path))
        if at is None:
            best = closest_path(schema, list(ref.path))
            others: list[str] = []
            if best is None:
                shortest = _same_leaf(schema, ref.path)
                if len(shortest) == 1:
                    best = shortest[0]
                else:  # several fields of that name: naming one would be a guess
                    others = shortest
            listed = f"; the documented ones ending in {ref.path[-1]!r}: " if others else ""
            yield Finding(
                "E5.2",
                loc,
                ref.text or f"{ref.var}.{shown}",
                expected=best or others or None,
                suggestion=best,
                message=f"{producer}'s documented response has no {shown!r}"
                + listed
                + ", ".join(others[:6]),
                operation=op.name,
            )
            return
        if not whole or param is None:
            return
        got = set(schema_types(at)) - {"null"}
        if ref.many:
            got = {"array"}
        want = set(schema_types(param.schema)) - {"null"}
        if not got or not want:
            return
        if got & {"array", "object"} and not (want & got) and want <= _SCALARS:
            yield Finding(
                "E5.4",
                loc,
                ref.text or f"{ref.var}.{shown}",
                expected=sorted(want),
                message=f"{shown or ref.var!r} of {producer} is "
                f"{'/'.join(sorted(got))}, but {name!r} takes {'/'.join(sorted(want))}",
                operation=op.name,
            )

    def _grounding(
        self,
        op: Operation,
        param: Parameter,
        value: Any,
        texts: list[str],
        seen: set[str],
        called: Collection[str] = (),
    ) -> Iterator[Finding]:
        # in a sequence every identifier has a source to name: an earlier step, or the user
        f = ground_value(
            op,
            param,
            value,
            texts,
            seen,
            self.producers,
            need_producer=False,
            catalog=self.scanner.catalog,
            called=called,
        )
        if f is not None:
            yield f

    # -- the sequence as a whole ---------------------------------------------------

    def _selection(
        self,
        scanner: Scanner,
        seq: Sequence,
        consumed: set[int],
        malformed: Collection[int] = (),
    ) -> Finding | None:
        """E2.1 of the sequence: it fits the instruction when any of its operations ranks
        among the retriever's top k (k: the number of steps), since an instruction names
        the goal ("the reviews of ...") or the way in ("the most popular show's ..."), and
        the search before a detail call is a prerequisite, not a wrong API. Otherwise the
        last step nothing consumes (the goal) is judged, as a single call would be."""
        if not seq.instruction or scanner.retriever is None:
            return None
        ops: list[tuple[Step, Operation]] = []
        for step in seq.steps:
            op = _operation(scanner.catalog, step.request) if step.request is not None else None
            if op is not None:
                ops.append((step, op))
        if not ops:
            return None
        k = max(scanner.top_k, len(seq.steps))
        if len(scanner.catalog) <= k:
            return None
        ranked = list(scanner.retriever.rank(seq.instruction, scanner.catalog))
        top = {r.name for r in ranked[:k]}
        if any(op.name in top for _, op in ops):
            return None
        goals = [(step, op) for step, op in ops if step.index not in consumed] or ops
        step, op = goals[-1]
        f = check_selection(
            op,
            seq.instruction,
            scanner.catalog,
            scanner.retriever,
            top_k=k,
            confident_margin=scanner.confident_margin,
        )
        if f is None or (scanner.leads_to(op, f) and step.index not in malformed):
            return None  # a token or an id the better API needs: a step towards it
        # the margin that decides the severity is the sequence's: the best API against
        # the best of its steps, not against the goal step alone; a destructive goal that
        # does not fit is an error at any margin, as for a single call (a wrong delete
        # cannot be undone)
        scores = {r.name: float(r.score) for r in ranked}
        closest = max(scores.get(o.name, 0.0) for _, o in ops)
        margin = scores[ranked[0].name] - closest
        sure = margin >= self.confident_margin or (f.severity == "error" and destructive(op))
        severity: Severity = "error" if sure else "warning"
        return _under(dataclasses.replace(f, severity=severity), (f"step[{step.index}]",))


def _same_leaf(schema: Mapping[str, Any], path: tuple[str, ...]) -> list[str]:
    """The shortest documented paths that end in the same field, starting the same way
    where one does (``items[].id`` -> ``items[].album.id``): a level the reference skipped.
    More than one when the skipped level is ambiguous (``items[].track.id`` and
    ``items[].added_by.id``). Where none starts the same way, a reference into a list
    (``results[0].id``) is offered the fields of a list (``parts[].id``, not the
    response's own ``id``) where the response has any."""
    from autofeedback.flow._paths import format_path, iter_paths

    names = [p for p in path if p != "[]"]
    if not names:
        return []
    found = [steps for steps, _ in iter_paths(schema) if steps and steps[-1] == names[-1]]
    # the same first field if any path keeps it, else the shortest anywhere
    same = [steps for steps in found if steps[0] == path[0]]
    listed = [steps for steps in found if ("[]" in steps) == ("[]" in path)]
    pool = same or listed or found
    if not pool:
        return []
    size = min(len(steps) for steps in pool)
    return [format_path(steps) for steps in pool if len(steps) == size]


def _refs(step: Step) -> Iterator[Ref]:
    if step.call is None:
        return
    for value in (*step.call.arguments.values(), *step.call.positional):
        parts = value.parts if isinstance(value, Derived) else (value,)
        for part in parts:
            if isinstance(part, Ref):
                yield part


def _literal(value: Any) -> bool:
    return not isinstance(value, (Ref, Unbound, Derived))


def _under(f: Finding, where: tuple[str, ...]) -> Finding:
    return dataclasses.replace(f, location=where + f.location)


def _operation(catalog: ApiCatalog, request: ApiRequest) -> Operation | None:
    if request.is_http:
        assert request.method is not None and request.url is not None
        hit = catalog.match_http(request.method, request.url)
        return hit[0] if hit else None
    return catalog.get(request.name or "")


def _literal_args(
    request: ApiRequest, op: Operation, catalog: ApiCatalog
) -> Iterator[tuple[str, Any]]:
    if not request.is_http:
        yield from request.arguments.items()
        return
    from autofeedback.core._resolve import request_args

    hit = None
    if request.method is not None and request.url is not None:
        # matched under the spec's servers: a real capture's URL carries the server's
        # base path (`/api/calendars/...` for `servers: [{url: .../api}]`)
        hit = ApiCatalog([op], servers=catalog.servers).match_http(request.method, request.url)
    for arg in request_args(request, hit[1] if hit else None):
        if arg.location not in ("header", "cookie"):
            yield arg.name, arg.value


def ground_value(
    op: Operation,
    param: Parameter,
    value: Any,
    texts: list[str],
    seen: set[str],
    producers: Any,
    *,
    need_producer: bool = True,
    catalog: ApiCatalog | None = None,
    called: Collection[str] = (),
) -> Finding | None:
    """E5.3 for one literal ``value`` of ``param``, or ``None``.

    The hint names where the value is: the response of a producer among the operations
    ``called`` earlier ("read it from X's response"), else the producer to call first.

    Placeholders (``<tv_id>``, ``your_token_here``) are reported always, as errors. An
    ungrounded identifier-, key- or credential-like value, or a weak placeholder
    (``12345`` as an id), is reported where the catalog has an operation that produces
    it, as a warning, unless ``need_producer`` is false (a trace or program, whose earlier
    steps and dialogue are the whole context: then always, as an error). For a single
    call the dialogue before it is a source the instruction may not repeat.
    """
    id_like = is_id_like(param)
    values = value if isinstance(value, (list, tuple)) else [value]
    loc = (param.location, param.name)
    for item in values:
        kind = placeholder_kind(item, id_like=id_like)
        if kind is None and not id_like:
            continue
        if kind is None and grounded(item, param, texts, seen):
            continue
        if kind is None and catalog is not None and _a_default(item, catalog):
            continue  # the tool definitions the model was given say this value
        if kind == "weak" and grounded(item, param, texts, seen, documented=False):
            # `12345` or `0` that the user gave or an earlier response returned is that
            # id, not a stand-in: grounding wins (copied from the docs' example, it is not)
            continue
        if kind is not None and any(str(item).lower() in t.lower() for t in texts):
            continue  # the user wrote it: theirs to mean
        found = list(producers(op.name, param.name))
        if kind is None and not found and need_producer:
            continue
        hint = None
        done = [p for p in found if p.operation in called]
        if done:
            hint = f"read it from the response of {done[0].operation}: `{done[0].path}`"
        elif found:
            best = _reachable(_described_first(found, param), catalog)
            hint = f"call {best.operation} first: its response has `{best.path}`"
        what = (
            "a placeholder"
            if kind == "placeholder"
            else "not given by the user or an earlier response"
        )
        message = f"{param.name!r} = {item!r} is {what}"
        if hint:
            message += f"; {hint}"
        # one call alone does not show the dialogue its value may come from: only a
        # placeholder is sure to be wrong there
        sure = kind == "placeholder" or not need_producer
        return Finding(
            "E5.3",
            loc,
            item,
            suggestion=hint,
            message=message,
            operation=op.name,
            severity="error" if sure else "warning",
        )
    return None


_DEFAULTS: weakref.WeakKeyDictionary[ApiCatalog, frozenset[str]] = weakref.WeakKeyDictionary()


def _a_default(value: Any, catalog: ApiCatalog) -> bool:
    """Whether ``value`` is the documented default of a parameter of any operation in
    ``catalog`` (``calendarId`` defaults to ``"primary"`` in ``listEvents``: the model
    that calls ``getCalendar(calendarId="primary")`` read it there)."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return False
    defaults = _DEFAULTS.get(catalog)
    if defaults is None:
        found: set[str] = set()
        for op in catalog:
            for param in op.parameters:
                schema = param.schema if isinstance(param.schema, Mapping) else {}
                default = schema.get("default")
                if isinstance(default, (str, int, float)) and not isinstance(default, bool):
                    found.add(str(default))
        defaults = _DEFAULTS[catalog] = frozenset(found)
    return str(value).strip() in defaults


#: producers scored this close to the best are a tie the parameter's description breaks
_TIE = 0.03
_GENERIC_FIELDS = frozenset(
    {"items", "item", "results", "data", "id", "ids", "uri", "uris", "href", "name", "value"}
)


def _described_first(found: list[Any], param: Parameter) -> list[Any]:
    """``found`` with the producers that the parameter's description names moved ahead
    of those it tied with: ``context_uri``, "Valid contexts are albums, artists &
    playlists", is read from ``albums.items[].uri`` before a user profile's ``uri``.

    Only a tie is broken (producers scored within ``_TIE`` of the best); a producer that
    scores clearly better stays first, and without a description nothing moves.
    """
    words = set(re.findall(r"[a-z]+", param.description.lower())) if param.description else set()
    if not words or len(found) < 2:
        return found
    top = max(p.score for p in found)
    tied = [p for p in found if p.score >= top - _TIE]

    def named(producer: Any) -> bool:
        fields = set(re.findall(r"[a-z]+", producer.path.lower())) - _GENERIC_FIELDS
        return bool(fields & words)

    first = [p for p in tied if named(p)]
    if not first or len(first) == len(tied):
        return found
    return first + [p for p in found if p not in first]


def _reachable(found: list[Any], catalog: ApiCatalog | None) -> Any:
    """The producer to name in "call X first": among the surer ones, the best ranked one
    that needs no identifier itself (a search or a list the user can call now), else the
    best; in each group one without side effects first (:func:`~autofeedback.checks.
    _words.no_side_effects`): a made-up calendar id is looked up with ``listCalendars``,
    and ``createCalendar`` would make a second calendar, not find the user's."""
    # a weak guess is never named over a surer producer, whatever it needs
    found = [p for p in found if getattr(p, "via", "") != "weak"] or found
    if catalog is None:
        return found[0]
    ops = {p.operation: catalog.get(p.operation) for p in found}
    ready = [
        p
        for p in found
        if (op := ops[p.operation]) is not None
        and not any(q.required and is_id_like(q) for q in op.parameters)
    ]
    for group in (ready, found):
        reads = [p for p in group if (op := ops[p.operation]) is not None and no_side_effects(op)]
        if reads or group:
            return (reads or group)[0]
    return found[0]


def ground_call(
    op: Operation,
    arguments: Mapping[str, Any],
    *,
    instruction: str | None,
    graph: _Graph | None = None,
    catalog: ApiCatalog | None = None,
    context: str | None = None,
) -> Iterator[Finding]:
    """E5.3 for the literal arguments of one call (the single-call path); ``catalog``
    lets the feedback name a producer the user can call now. ``context``: every other
    text the model saw (the system prompt, earlier turns), which grounds a value too."""
    texts = [t for t in (instruction, context) if t]

    def producers(operation: str, parameter: str) -> list[Any]:
        if graph is None:
            return []
        try:
            return list(graph.producers(operation, parameter))
        except KeyError:
            return []

    for name, value in arguments.items():
        param = op.parameter(name)
        if param is None:
            continue
        f = ground_value(op, param, value, texts, set(), producers, catalog=catalog)
        if f is not None:
            yield f


def check_next_calls(
    checker: SequenceChecker, history: Iterable[Any], calls: CollectionSequence[Mapping[str, Any]]
) -> list[list[Finding]]:
    """The findings of each of ``calls`` (one assistant turn, as OpenAI Chat tool calls
    ``{"id", "type": "function", "function": {"name", "arguments"}}``), checked as the
    last steps of the chat ``history`` (any provider's shape, see
    :func:`~autofeedback.flow._sequence.sequence_from_chat`): one list per call, located
    as a single call's findings are. The history's own calls are not judged again.

    >>> from autofeedback.flow._graph import FlowGraph
    >>> catalog = ApiCatalog.from_tools([
    ...     {"name": "find", "parameters": {"type": "object", "properties": {}},
    ...      "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}},
    ...     {"name": "get", "parameters": {"type": "object", "properties": {
    ...         "item_id": {"type": "string"}}}}])
    >>> from autofeedback.scanner._scan import Scanner
    >>> checker = SequenceChecker(Scanner(catalog, retriever=None),
    ...                           graph=FlowGraph.from_catalog(catalog))
    >>> history = [{"role": "user", "content": "show the item"},
    ...     {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
    ...      "name": "find", "input": {}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
    ...      "content": '{"id": "a7"}'}]}]
    >>> def call(value):
    ...     return {"id": "c2", "type": "function", "function": {"name": "get",
    ...             "arguments": {"item_id": value}}}
    >>> check_next_calls(checker, history, [call("a7")]), [
    ...     f.code for f in check_next_calls(checker, history, [call("a8")])[0]]
    ([[]], ['E5.3'])
    """
    from autofeedback.flow._sequence import sequence_from_chat

    history = list(history)
    first = len(sequence_from_chat(history).steps)  # this turn's steps come after these
    seq = sequence_from_chat([*history, {"role": "assistant", "tool_calls": list(calls)}])
    return _last_steps(checker, seq, first, len(calls))


def check_next_requests(
    checker: SequenceChecker, history: Iterable[Any], requests: list[ApiRequest]
) -> list[list[Finding]]:
    """:func:`check_next_calls` for requests already read (a logged call, an HTTP
    request): each checked as the next step after the chat ``history``."""
    from autofeedback.flow._sequence import Step, sequence_from_chat

    earlier = sequence_from_chat(list(history))
    first = len(earlier.steps)
    steps = (*earlier.steps, *(Step(first + i, r) for i, r in enumerate(requests)))
    seq = dataclasses.replace(earlier, steps=steps)
    return _last_steps(checker, seq, first, len(requests))


def _last_steps(
    checker: SequenceChecker, seq: Sequence, first: int, count: int
) -> list[list[Finding]]:
    """The findings of steps ``first`` to ``first + count`` of ``seq``, one list each,
    located as a single call's are (the earlier steps were judged already)."""
    out: list[list[Finding]] = [[] for _ in range(count)]
    for f in checker.iter_findings(seq):
        head = f.location[0] if f.location else ""
        if not head.startswith("step["):
            continue
        index = int(head[5:-1])
        if first <= index < first + count:
            out[index - first].append(dataclasses.replace(f, location=f.location[1:]))
    return out


def has_tool_steps(history: Iterable[Any]) -> bool:
    """Whether a chat (any provider's shape) holds an earlier tool call: then its next
    calls are the next steps of a sequence."""
    from autofeedback.flow._sequence import sequence_from_chat

    return bool(sequence_from_chat(list(history)).steps)


def response_schemas(responses: Any) -> dict[str, Mapping[str, Any]]:
    """A record's ``responses``: GraphQL SDL text (GraphQL-RestBench's ``GraphQL_schema``)
    or a mapping from tool name to JSON Schema. Raises ``ValueError`` on anything else."""
    if responses is None:
        return {}
    if isinstance(responses, str):
        from autofeedback.flow._graphql import response_schemas_from_graphql

        return dict(response_schemas_from_graphql(responses, source="<record responses>"))
    if isinstance(responses, Mapping) and all(
        isinstance(k, str) and isinstance(v, Mapping) for k, v in responses.items()
    ):
        return dict(responses)
    raise ValueError("'responses' must be GraphQL schema text or a mapping of tool name to schema")


def sequence_checker(scanner: Scanner, responses: Any = None) -> SequenceChecker:
    """A :class:`SequenceChecker` for ``scanner``'s catalog, with the data-flow graph built
    from the catalog and the record's own response schemas (``responses``)."""
    from autofeedback.flow._graph import FlowGraph
    from autofeedback.flow._graphql import with_responses

    schemas = response_schemas(responses)
    catalog = with_responses(scanner.catalog, schemas) if schemas else scanner.catalog
    graph = FlowGraph.from_catalog(catalog)
    return SequenceChecker(scanner, graph=graph, responses=schemas)
