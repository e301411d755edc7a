"""E3: are the parameter names documented for the API, and sent where the docs say?

Checked only once the API name is right. An unknown name is, in this order: a literal
variant of one of this API's parameters (E3.2, the most specific evidence), a semantic
variant of one (E3.3), a parameter of another API and of nothing here (E3.1, naming the
one API it fits best), or anything else (E3). On a spec of 1,500 operations almost any
word is some other operation's parameter, so what the model meant *here* comes first.
Required parameters that are missing are E3.4 (beyond the paper); a body field the
schema requires is an error once a body is sent or when the spec requires the body,
else one warning (OpenAPI's ``requestBody.required`` defaults to false).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._names import (
    NameMatcher,
    Scored,
    closest_spelling,
    id_entity,
    literal_key,
    other_entities,
)
from autofeedback.core._findings import Finding
from autofeedback.core._model import Operation, Parameter
from autofeedback.core._resolve import Arg

__all__ = ["ParamCheck", "check_parameters"]


@dataclass(frozen=True)
class ParamCheck:
    findings: tuple[Finding, ...]
    #: each argument that names a documented parameter, with that parameter
    matched: tuple[tuple[Arg, Parameter], ...]


def _param_doc(p: Parameter) -> str:
    kind = p.schema.get("type", "any") if isinstance(p.schema, Mapping) else "any"
    req = "required" if p.required else "optional"
    text = f"{p.name} ({p.location}, {kind}, {req})"
    return f"{text}: {p.description.strip()}" if p.description.strip() else text


class _Ranker(Protocol):
    def rank(
        self, instruction: str, catalog: ApiCatalog, k: int | None = None
    ) -> Sequence[Scored]: ...


def check_parameters(
    op: Operation,
    args: list[Arg],
    catalog: ApiCatalog,
    *,
    matcher: NameMatcher | None = None,
    threshold: float = 0.5,
    body_sent: bool | None = None,
    instruction: str | None = None,
    ranker: _Ranker | None = None,
) -> ParamCheck:
    """E3 findings for ``args`` sent to ``op``, and the arguments that matched.

    ``body_sent`` says whether the request carried a body at all (by default: whether any
    argument travels in it); ``instruction`` and ``ranker`` pick the operation an E3.1
    name belongs to when several document it.
    """
    if body_sent is None:
        body_sent = any(a.location == "body" for a in args)
    findings: list[Finding] = []
    matched: list[tuple[Arg, Parameter]] = []
    params = list(op.parameters)
    auth = {(p.location, p.name.lower()) for p in op.auth_parameters}
    # a call in function form names a credential without saying where it travels
    auth |= {("argument", name) for _, name in auth}
    used: set[str] = set()
    body_open = _body_allows_extra(op)
    lookup = _Lookup(params)

    # findings in argument order; an unknown name is judged once every known one is
    # matched, so that its suggestion can be a parameter the request does not send yet
    ordered: list[Finding | Arg] = []
    for arg in args:
        if (arg.location, arg.name.lower()) in auth:
            # a credential is sent: a parameter the docs give the same name (and place,
            # for an HTTP request) is not missing
            used.update(
                p.name
                for p in params
                if p.name.lower() == arg.name.lower() and arg.location in ("argument", p.location)
            )
            continue
        param = lookup.find(arg)
        if param is not None:
            used.add(param.name)
            if arg.location not in ("argument", param.location):
                ordered.append(
                    Finding(
                        "E3",
                        (arg.location, arg.name),
                        arg.name,
                        expected=param.location,
                        suggestion=param.name,
                        operation=op.name,
                        doc=_param_doc(param),
                        message=f"parameter {arg.name!r} belongs in the {param.location}, "
                        f"not the {arg.location}",
                    )
                )
            else:
                matched.append((arg, param))
            continue
        extra = _extra_schema(op, arg, body_open)
        if extra is not None:
            # a field the schema takes beyond those it lists: checked against what it
            # says of them (``additionalProperties: {"type": "integer"}``)
            matched.append((arg, Parameter(arg.name, arg.location, extra)))
            continue
        if arg.location in ("header", "cookie") or (
            arg.location in ("body", "argument") and body_open
        ):
            continue  # clients add headers and cookies freely; open bodies take extra fields
        carrier = lookup.object_query(arg)
        if carrier is not None:
            used.add(carrier.name)  # a property of an object sent in the query string
            continue
        ordered.append(arg)

    unknown = [a for a in ordered if isinstance(a, Arg)]
    if unknown:
        owner = _Owner(catalog, op, args, instruction, ranker)
        free = [p for p in params if p.name not in used]
        missing = [p for p in free if p.required]
        known = _Known(params, free)
        judged = 0
        for item in ordered:
            if isinstance(item, Finding):
                findings.append(item)
                continue
            # one unknown name and one missing required parameter: it is the one meant
            # (a renamed parameter); else the closest among those not sent yet
            sole = missing[0] if len(unknown) == 1 and len(missing) == 1 else None
            if judged >= MAX_REPORTED:
                if judged == MAX_REPORTED:  # the rest as one finding, at the first of them
                    more = _more_unknown(op, item, len(unknown) - judged, known)
                    findings.append(_partly_read(op, more))
                judged += 1
                continue
            # the closest-name searches cost a pass over every parameter (and with a
            # matcher, the model): only the first MAX_SEARCHED unknown names get them
            search = judged < MAX_SEARCHED
            judged += 1
            finding = _unknown(
                op,
                item,
                known,
                catalog,
                matcher if search else None,
                threshold,
                owner,
                sole,
                search=search,
            )
            findings.append(_partly_read(op, finding))
    else:
        findings.extend(f for f in ordered if isinstance(f, Finding))

    # a call (``createCharge(amount=1)``) sends its body fields as plain arguments
    body_sent = body_sent or any(p.location == "body" for _, p in matched)
    unsent_body: list[Parameter] = []
    for p in params:
        # reported even when an unknown name probably meant it (E3.2/E3.3 above): one
        # finding never hides another, and the model must still send this name
        if p.required and p.name not in used:
            if p.location == "header" and any(
                a.location == "header" and a.name.lower() == p.name.lower() for a in args
            ):
                continue
            if p.location == "body" and not body_sent and not op.body_required:
                unsent_body.append(p)
                continue
            findings.append(
                Finding(
                    "E3.4",
                    (p.location, p.name),
                    None,
                    expected=p.name,
                    suggestion=p.name,
                    operation=op.name,
                    doc=_param_doc(p),
                    message=f"required {_where(p)}parameter {p.name!r} is missing",
                )
            )
    if unsent_body:
        names = ", ".join(repr(p.name) for p in unsent_body)
        findings.append(
            Finding(
                "E3.4",
                ("body",),
                None,
                expected=[p.name for p in unsent_body],
                suggestion=unsent_body[0].name,
                operation=op.name,
                doc="; ".join(_param_doc(p) for p in unsent_body[:5]),
                severity="warning",
                message=f"no request body was sent; the documented body requires {names} "
                "(the spec does not require the body itself)",
            )
        )
    return ParamCheck(tuple(findings), tuple(matched))


_VARIANT = frozenset({"E3.2", "E3.3"})

#: How much clearer than ``threshold`` a semantic variant must be to be reported as E3.3
#: when the name is another operation's parameter (measured in benchmarks/detection.py).
_OWNED_MARGIN = 0.1

_DEEP = re.compile(r"([^\[\]]+)\[[^\[\]]*\].*")


def _where(p: Parameter) -> str:
    return "" if p.location == "argument" else f"{p.location} "


class _Lookup:
    """The documented parameter an argument names, in constant time: the same name in the
    same place, a header in any case, else the same name anywhere (the first documented);
    a cookie only as a documented cookie."""

    def __init__(self, params: list[Parameter]) -> None:
        self.params = params
        self.placed: dict[tuple[str, str], Parameter] = {}
        self.named: dict[str, Parameter] = {}
        self.headers: dict[str, Parameter] = {}
        for p in params:
            self.placed.setdefault((p.name, p.location), p)
            self.named.setdefault(p.name, p)
            if p.location == "header":
                self.headers.setdefault(p.name.lower(), p)
        self._objects: dict[str, Parameter] | None = None

    def find(self, arg: Arg) -> Parameter | None:
        hit = self.placed.get((arg.name, arg.location))
        if arg.location == "cookie":
            return hit  # a site's own cookies (``lang``, ``page``) are no misplaced parameter
        if hit is None and arg.location == "header":
            hit = self.headers.get(arg.name.lower())
        return hit if hit is not None else self.named.get(arg.name)

    def object_query(self, arg: Arg) -> Parameter | None:
        """The object-valued query parameter ``arg`` is a piece of: ``filter[status]=x``
        (``deepObject`` style, or PHP/Rails brackets) or ``gt=1`` for an object serialised
        ``style: form, explode: true``, whose properties become query keys."""
        if arg.location != "query":
            return None
        m = _DEEP.fullmatch(arg.name)
        if m is not None:
            return self.placed.get((m.group(1), "query"))
        if self._objects is None:
            self._objects = {}
            for p in self.params:
                if p.location != "query" or p.explode is False or (p.style or "form") != "form":
                    continue
                schema = p.schema if isinstance(p.schema, Mapping) else {}
                props = schema.get("properties")
                if isinstance(props, Mapping):
                    for key in props:
                        self._objects.setdefault(str(key), p)
        return self._objects.get(arg.name)


#: Unknown names per call that are searched for the closest documented one (spelling,
#: meaning); past them, only the literal-variant look-up, which is a dict hit. A model
#: that sends 2,000 wrong names learns nothing from 2,000 suggestions.
MAX_SEARCHED = 32
#: Unknown names per call reported one by one; the rest are one finding that counts them.
MAX_REPORTED = 100
#: Documented names a finding lists (its ``expected`` and message).
MAX_LISTED = 40


class _Known:
    """The documented names, computed once per call: in order, as literal keys (for
    E3.2, in constant time), and those not sent yet (the suggestions)."""

    def __init__(self, params: list[Parameter], free: list[Parameter]) -> None:
        self.params = params
        self.names = [p.name for p in params]
        self.candidates = [p.name for p in free] or self.names
        self.by_name = {p.name: p for p in reversed(params)}  # the first one documented
        self.literal: dict[str, list[str]] = {}
        for name in self.names:
            key = literal_key(name)
            if key:
                found = self.literal.setdefault(key, [])
                if len(found) < 2 and name not in found:
                    found.append(name)
        listed = self.names[:MAX_LISTED]
        more = len(self.names) - len(listed)
        self.shown = ", ".join(listed) + (f" and {more} more" if more else "") or "none"
        self.listed: list[str] = listed

    def closest_literal(self, name: str) -> str | None:
        """:func:`closest_literal` over every documented name, in constant time."""
        return next((c for c in self.literal.get(literal_key(name), ()) if c != name), None)


def _extra_schema(op: Operation, arg: Arg, body_open: bool) -> Mapping[str, Any] | None:
    """The schema an argument no parameter names must fit, where the docs take such
    arguments and say what they hold: a function's ``additionalProperties``
    (:attr:`Operation.extra_arguments`), or a schema under a JSON body's own."""
    if arg.location == "argument" and op.extra_arguments is not None:
        return op.extra_arguments
    if arg.location == "body" and body_open and isinstance(op.body_schema, Mapping):
        more = op.body_schema.get("additionalProperties")
        return more if isinstance(more, Mapping) and more else None
    return None


def _body_allows_extra(op: Operation) -> bool:
    """Whether the body takes fields it does not list: ``additionalProperties`` on it or on
    any part of a composition, or a body schema that lists no fields at all."""
    schema = op.body_schema
    if not isinstance(schema, Mapping):
        return False
    if not any(p.location == "body" for p in op.parameters):
        return schema.get("additionalProperties", True) is not False and bool(schema)
    return _open(schema, 0)


def _open(schema: Mapping[str, Any], depth: int) -> bool:
    if schema.get("additionalProperties") not in (None, False):
        return True
    if depth > 8:
        return False
    for key in ("allOf", "oneOf", "anyOf"):
        parts = schema.get(key)
        if isinstance(parts, list) and any(
            isinstance(part, Mapping) and _open(part, depth + 1) for part in parts
        ):
            return True
    return False


class _Owner:
    """Which of the operations documenting a name the request most likely meant: the one
    the instruction ranks highest, else the one sharing the most of the request's
    argument names. Computed on first use only."""

    def __init__(
        self,
        catalog: ApiCatalog,
        op: Operation,
        args: list[Arg],
        instruction: str | None,
        ranker: _Ranker | None,
    ) -> None:
        self.catalog = catalog
        self.op = op
        self.sent = {a.name for a in args}
        self.instruction = instruction
        self.ranker = ranker
        self._order: dict[str, int] | None = None

    def best(self, owners: Sequence[Operation]) -> Operation:
        if self.instruction and self.ranker is not None and len(owners) > 1:
            if self._order is None:  # once per call, not once per unknown name
                ranked = self.ranker.rank(self.instruction, self.catalog)
                self._order = {r.name: i for i, r in enumerate(ranked)}
            order = self._order
            return min(owners, key=lambda o: order.get(o.name, len(order)))
        return max(owners, key=lambda o: len(self.sent & {p.name for p in o.parameters}))


def _unknown(
    op: Operation,
    arg: Arg,
    known: _Known,
    catalog: ApiCatalog,
    matcher: NameMatcher | None,
    threshold: float,
    owner: _Owner,
    sole: Parameter | None = None,
    *,
    search: bool = True,
) -> Finding:
    """The E3 finding for an unknown name. Spelling and semantic variants are looked for
    among all documented names; the suggestion is one of the ``free`` ones (those the
    request does not send yet: a sent parameter is not what another name meant), ``sole``
    when exactly one required parameter is missing. ``search``: false past the first
    :data:`MAX_SEARCHED` unknown names of a call (no spelling or semantic search)."""
    where = (arg.location, arg.name)
    names = known.names
    candidates = known.candidates
    place = "" if arg.location == "argument" else f"{arg.location} "
    literal = known.closest_literal(arg.name)
    if literal is not None:
        return _variant("E3.2", op, arg, known, literal, f"it is a spelling variant of {literal!r}")
    owners = [o for o in catalog.parameter_owners.get(arg.name, ()) if o.name != op.name]
    if matcher is not None and names:
        # a name other operations document is evidence of E3.1: a variant here must be
        # clearer to outweigh it (title -> name 0.63 does; account -> password 0.55 not)
        bar = threshold + _OWNED_MARGIN if owners else threshold
        ranked = _without_other_entities(
            matcher, arg.name, matcher.name_similarity(arg.name, names), bar
        )
        scores = {r.name: float(r.score) for r in ranked}
        best = ranked[0].name if ranked and ranked[0].score >= bar else None
        if best is not None and best not in candidates:
            # closest to a parameter the request already sends (login ~ password
            # while password is there): what it meant is one not sent yet (never the id
            # of another entity: movie_id for a missing person_id)
            best = (
                sole.name
                if sole is not None and not other_entities(arg.name, sole.name)
                else next((r.name for r in ranked if r.name in candidates), best)
            )
            if owners and scores.get(best, 0.0) < bar:
                # ... but another API's name that is no variant of that one is E3.1
                # (new_password for a missing username: 0.14)
                best = None
        if best is not None:
            return _variant(
                "E3.3",
                op,
                arg,
                known,
                best,
                f"the closest documented one is {best!r} (similarity {scores.get(best, 0.0):.2f})",
            )
    if sole is not None:
        spelling: str | None = sole.name
    else:
        spelling = closest_spelling(arg.name, candidates) if search else None
    if spelling is not None and other_entities(arg.name, spelling):
        spelling = None  # a movie's id is never what a person_id wanted
    if owners:
        belongs = owner.best(owners).name
        hint = f"; did you mean {spelling!r}?" if spelling else ""
        return Finding(
            "E3.1",
            where,
            arg.name,
            expected=known.listed,
            suggestion=spelling,
            operation=op.name,
            message=f"parameter {arg.name!r} belongs to {belongs}, not to {op.name}{hint}",
        )
    # say which one it probably is, as E3.1 does (and E2 for an API name): a typo such as
    # `titel` or `stauts` is read at once, a list of every documented name is not
    hint = f"did you mean {spelling!r}? " if spelling else ""
    return Finding(
        "E3",
        where,
        arg.name,
        expected=known.listed,
        suggestion=spelling,
        operation=op.name,
        message=f"unknown {place}parameter {arg.name!r}; {hint}{op.name} takes: {known.shown}",
    )


def _partly_read(op: Operation, finding: Finding) -> Finding:
    """``finding`` on an unknown name, saying where ``op``'s documentation could not be
    read (the name may be documented there: a spec whose parameter file is missing)."""
    if not op.unread:
        return finding
    more = len(op.unread) - 1
    also = f" and {more} more place{'s' if more > 1 else ''}" if more else ""
    note = f"{op.name}'s documentation was only partly read ({op.unread[0]}{also})"
    return replace(finding, message=f"{finding.message}; {note}")


def _more_unknown(op: Operation, arg: Arg, count: int, known: _Known) -> Finding:
    """One E3 finding for the ``count`` unknown names past :data:`MAX_REPORTED`, located at
    the first of them (``arg``)."""
    place = "" if arg.location == "argument" else f"{arg.location} "
    rest = count - 1
    more = f" and {rest} more unknown name{'s' if rest > 1 else ''} after it" if rest else ""
    return Finding(
        "E3",
        (arg.location, arg.name),
        arg.name,
        expected=known.listed,
        operation=op.name,
        message=f"unknown {place}parameter {arg.name!r}{more} (the first {MAX_REPORTED} "
        f"are reported one by one); {op.name} takes: {known.shown}",
    )


def _without_other_entities(
    matcher: NameMatcher, name: str, ranked: Sequence[Scored], bar: float
) -> list[Scored]:
    """``ranked`` without the ids of another entity: ``movie_id`` is no semantic variant
    of ``person_id``, although the shared suffix makes the names close (0.64 in RestBench
    TMDB's query 25). Two id names are variants only when their entities are
    (``client_id`` for ``customer_id``); the entities are compared on their own."""
    entity = id_entity(name)
    if entity is None:
        return list(ranked)
    kept = []
    for r in ranked:
        other = id_entity(r.name)
        if r.score >= bar and other is not None and other != entity:
            close = matcher.name_similarity(entity, [other])
            if not close or close[0].score < bar:
                continue  # movie for person: not a variant
        kept.append(r)
    return kept


def _variant(code: str, op: Operation, arg: Arg, known: _Known, meant: str, why: str) -> Finding:
    """E3.2 / E3.3: ``arg`` is a variant of the documented parameter ``meant``."""
    place = "" if arg.location == "argument" else f"{arg.location} "
    p = known.by_name[meant]
    return Finding(
        code,
        (arg.location, arg.name),
        arg.name,
        expected=meant,
        suggestion=meant,
        operation=op.name,
        doc=_param_doc(p),
        message=f"unknown {place}parameter {arg.name!r}; {why}",
    )
