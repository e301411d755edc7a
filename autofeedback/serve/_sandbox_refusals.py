"""The state errors a spec documents, read from its error responses' own words.

A real server refuses a valid request for what it remembers: a name already taken, an
order already shipped, a quota spent. Specs say so in their error responses
(``409: "info_code 20031: the order has already shipped and cannot be cancelled"``);
this module reads those words, for any spec, into :class:`StateRule` values that the
sandbox's session (:mod:`autofeedback.serve._sandbox_state`) enforces:

* **duplicate**: ``already exists``, ``already taken``, ``already in use``, ``must be
  unique``, ``duplicate``: a create (or an update) whose value in a *unique field* is
  already held by another record of the store. The unique fields are the body fields
  the text names (``"a calendar with this name already exists"``: ``name``), else those
  whose own description says they are unique; never one that says it "does not need to
  be unique". A text that names no field gives no rule.
* **state**: a state of the resource the text names (``already shipped``, ``a
  cancelled order``) that is a value of the resource's status field (``status``,
  ``state``, ``*_status``, an enum) or the state an action of the spec leaves it in
  (``POST /orders/{id}/cancel`` leaves it ``cancelled``): the operation is refused on a
  resource in that state. A state after "cannot be" (what the operation itself does)
  is not one, nor one that names the response itself (a status ``error``, and
  "Returns an error when the request cannot be found").
* **quota**: ``at most 10``, ``a limit of 10``, ``quota``, ``too many`` with a number:
  a create is refused once the session has created that many in the store.

What no spec text can tell the sandbox (an expired token, a resource of another user,
stock that ran out elsewhere) is not simulated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from autofeedback.core._model import Operation, Response
from autofeedback.serve._sandbox_store import props_of

__all__ = ["StateRule", "action_verb", "participle_of", "state_rules", "status_fields"]

_DUPLICATE = re.compile(
    r"\balready (?:exists?|taken|in use|registered|used|booked|reserved)\b|\bduplicate"
    r"|\bmust be unique\b|\bnot unique\b|\bis taken\b|\bname conflict\b",
    re.I,
)
_NOT_UNIQUE_NEEDED = re.compile(
    r"\b(?:not need|does not have|doesn't have|need not|needn't) (?:to )?be unique\b", re.I
)
_UNIQUE = re.compile(r"\bunique\b", re.I)
_QUOTA = re.compile(r"\bquota\b|\blimit\b|\btoo many\b|\bexceed", re.I)
_LIMIT = re.compile(
    r"\b(?:at most|maximum of|max(?:imum)?|limit of|up to|no more than|more than|exceeds?)"
    r" (\d+)\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:cannot|can't|can not|not|to|must) be\s*$", re.I)
# "Returns an error when ...", "gives a `conflict` error": the word names the response
_THE_RESPONSE = re.compile(
    r"\b(?:returns?|returned|gives|raises|throws|responds with|fails with)\s+"
    r"(?:an?\s+|the\s+)?(?:`[^`]*`\s+)?$",
    re.I,
)
_SEGMENT = re.compile(r"\n\s*(?:[-*]\s*)?|;\s+")
_STATUS_NAME = re.compile(r"^(?:status|state|[a-z_]*_status|[a-z]*Status)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")


@dataclass(frozen=True)
class StateRule:
    """One documented state error of one operation: ``kind`` is ``duplicate``,
    ``state`` or ``quota``; ``text`` the words that document it, ``status`` the
    documented HTTP status, ``response`` the documented response."""

    kind: str
    status: int
    text: str
    response: Response
    #: duplicate: the unique fields; state: the status fields whose value refuses
    fields: tuple[str, ...] = ()
    #: state: the states that refuse (``shipped``)
    states: tuple[str, ...] = ()
    #: quota: how many creates a session may make
    limit: int | None = None


def status_fields(schema: Mapping[str, Any] | None) -> dict[str, tuple[str, ...]]:
    """The status-like fields of an object schema and their enum values (``{"status":
    ("placed", "shipped", ...)}``); a status field with no enum maps to ``()``."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for name, sub in props_of(schema).items():
        if not isinstance(name, str) or not _STATUS_NAME.match(name):
            continue
        enum = sub.get("enum") if isinstance(sub, Mapping) else None
        values = tuple(v for v in enum or () if isinstance(v, str))
        out[name] = values
    return out


def action_verb(op: Operation) -> str | None:
    """The verb of an action on one resource: the last literal segment after its id
    (``POST /orders/{id}/cancel`` -> ``cancel``), ``None`` for anything else."""
    if not op.path or (op.method or "").upper() not in ("POST", "PUT", "PATCH"):
        return None
    segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
    if len(segments) < 3 or not segments[-2].startswith("{") or segments[-1].startswith("{"):
        return None
    word = segments[-1].lower()
    return word if word.isalpha() and not word.endswith("s") else None


def participle_of(verb: str, states: Iterable[str]) -> str | None:
    """The state among ``states`` that ``verb`` leaves a resource in (``cancel`` ->
    ``cancelled``/``canceled``, ``close`` -> ``closed``, ``archive`` -> ``archived``).

    >>> participle_of("cancel", ["placed", "cancelled"]), participle_of("ship", ["sent"])
    ('cancelled', None)
    """
    stem = verb.lower()[: max(3, len(verb) - 1)] if len(verb) > 3 else verb.lower()
    for state in states:
        s = state.lower()
        if s.startswith(stem) and s.endswith(("ed", "d")) and s != verb.lower():
            return state
    return None


def _segments(response: Response) -> list[str]:
    texts = [response.description or ""]
    example = response.example
    if isinstance(example, Mapping):
        texts += [v for v in example.values() if isinstance(v, str)]
        inner = example.get("error")
        if isinstance(inner, Mapping):
            texts += [v for v in inner.values() if isinstance(v, str)]
    elif isinstance(example, str):
        texts.append(example)
    out: list[str] = []
    for text in texts:
        out += [s.strip() for s in _SEGMENT.split(text[:4000]) if s.strip()]
    return out


def _named_fields(text: str, names: Iterable[str]) -> tuple[str, ...]:
    lowered = text.lower()
    found = []
    for name in names:
        spaced = name.replace("_", " ").lower()
        if re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered) or (
            spaced != name.lower() and spaced in lowered
        ):
            found.append(name)
    return tuple(found)


def _states_named(text: str, states: Iterable[str]) -> tuple[str, ...]:
    """The states ``text`` says a resource is in: a state word not after "cannot be"
    nor naming the response (``Returns an error``)."""
    out = []
    for state in states:
        for m in re.finditer(rf"(?<![\w-]){re.escape(state)}(?![\w-])", text, re.I):
            before = text[max(0, m.start() - 40) : m.start()]
            if not _NEGATED.search(before[-20:]) and not _THE_RESPONSE.search(before):
                out.append(state)
                break
    return tuple(out)


def state_rules(
    op: Operation,
    *,
    body_fields: Mapping[str, str],
    states: Mapping[str, tuple[str, ...]],
    creates: bool,
) -> tuple[StateRule, ...]:
    """The state errors ``op`` documents.

    ``body_fields``: the fields a request body of ``op`` may carry, with their
    descriptions; ``states``: the status fields of the resource ``op`` acts on, with the
    states each can hold (their enum values, and the states the spec's actions leave
    it in); ``creates``: whether ``op`` adds a resource (only a create has a quota).
    """
    out: list[StateRule] = []
    for response in op.error_responses:
        if response.status[:1] != "4":
            continue
        status = int(response.status) if response.status.isdigit() else 409
        for text in _segments(response):
            if _DUPLICATE.search(text) and not _NOT_UNIQUE_NEEDED.search(text):
                fields = _named_fields(text, body_fields)
                if not fields:
                    fields = tuple(
                        name
                        for name, doc in body_fields.items()
                        if _UNIQUE.search(doc) and not _NOT_UNIQUE_NEEDED.search(doc)
                    )
                if fields:
                    out.append(StateRule("duplicate", status, text, response, fields=fields))
                continue
            limit = _LIMIT.search(text)
            if creates and limit is not None and (_QUOTA.search(text) or status == 429):
                out.append(StateRule("quota", status, text, response, limit=int(limit.group(1))))
                continue
            for field, values in states.items():
                named = _states_named(text, values)
                if named:
                    out.append(StateRule("state", status, text, response, (field,), named))
                    break
    return tuple(out)
