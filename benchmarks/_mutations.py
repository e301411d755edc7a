"""Labelled mutations of gold calls: one function per error subtype of the paper's
taxonomy. Each takes a gold call and its catalog and returns the mutated call, or
``None`` where the subtype cannot be produced for that call (a one-API doc set has no
"other API"; a parameter with no enum cannot leave it).

All choices are deterministic (a seeded ``random.Random`` per record).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autofeedback import ApiCatalog, Operation

Call = tuple[str, dict[str, Any]]

# Common API vocabulary -> a word with the same meaning, for E2.3/E3.3 renames. Only
# same-sense synonyms: abbreviations (func), archaic words (annum) and other senses of a
# word (book -> reserve in "book_name") are not what an LLM's semantic slip looks like.
SYNONYMS: dict[str, str] = {
    "get": "fetch",
    "fetch": "retrieve",
    "retrieve": "get",
    "query": "lookup",
    "search": "find",
    "find": "search",
    "list": "enumerate",
    "create": "make",
    "add": "insert",
    "delete": "remove",
    "remove": "delete",
    "update": "modify",
    "modify": "change",
    "set": "assign",
    "calculate": "compute",
    "compute": "calculate",
    "calc": "compute",
    "check": "verify",
    "send": "dispatch",
    "cancel": "abort",
    "open": "launch",
    "register": "enroll",
    "convert": "transform",
    "translate": "interpret",
    "count": "tally",
    "play": "start",
    "show": "display",
    "predict": "forecast",
    "estimate": "approximate",
    "analyze": "examine",
    "generate": "produce",
    "recommend": "suggest",
    "user": "account",
    "name": "title",
    "id": "identifier",
    "date": "day",
    "time": "clock",
    "city": "town",
    "country": "nation",
    "number": "count",
    "amount": "quantity",
    "price": "cost",
    "location": "place",
    "address": "residence",
    "email": "mail",
    "phone": "telephone",
    "message": "note",
    "description": "summary",
    "content": "text",
    "text": "content",
    "title": "heading",
    "start": "begin",
    "end": "finish",
    "month": "mo",
    "type": "kind",
    "category": "class",
    "size": "dimension",
    "length": "extent",
    "width": "breadth",
    "height": "tall",
    "weight": "mass",
    "speed": "velocity",
    "distance": "range",
    "temperature": "temp",
    "weather": "climate",
    "movie": "film",
    "song": "track",
    "music": "audio",
    "image": "picture",
    "picture": "photo",
    "photo": "image",
    "word": "term",
    "language": "lang",
    "code": "identifier",
    "key": "token",
    "token": "key",
    "password": "passcode",
    "username": "login",
    "limit": "max",
    "page": "offset",
    "sort": "order",
    "order": "sequence",
    "area": "region",
    "value": "amount",
    "rate": "ratio",
    "interest": "yield",
    "principal": "capital",
    "radius": "radial",
    "initial": "starting",
    "final": "ending",
    "total": "sum",
    "data": "info",
    "info": "details",
    "details": "info",
    "status": "state",
    "event": "occasion",
    "meeting": "appointment",
    "appointment": "booking",
    "doctor": "physician",
    "patient": "sufferer",
    "symptom": "ailment",
    "stock": "share",
    "company": "firm",
    "product": "item",
    "item": "product",
    "recipe": "dish",
    "restaurant": "eatery",
    "hotel": "lodging",
    "flight": "trip",
    "airport": "airfield",
    "holiday": "vacation",
    "team": "squad",
    "player": "athlete",
    "game": "match",
    "score": "points",
    "population": "inhabitants",
    "history": "past",
    "news": "headlines",
    "law": "statute",
    "case": "lawsuit",
    "court": "tribunal",
    "book_title": "title",
    "author": "writer",
    "equation": "formula",
    "matrix": "array",
    "vector": "array",
    "probability": "chance",
    "mean": "average",
    "average": "mean",
    "list_of": "array_of",
    "numbers": "values",
    "values": "numbers",
    "unit": "measure",
    "units": "measures",
    "currency": "money",
    "from": "source",
    "to": "target",
    "source": "origin",
    "destination": "target",
    "alarm": "alert",
    "reminder": "alert",
    "agenda": "schedule",
    "schedule": "timetable",
    "balance": "funds",
    "account": "profile",
    "device": "gadget",
    "scene": "setting",
    "knowledge": "info",
    "emergency": "urgent",
    "health": "wellness",
    "registration": "enrollment",
    "translation": "rendering",
    "wiki": "encyclopedia",
    "joke": "gag",
    "fact": "trivia",
    "fruit": "produce",
    "cat": "kitty",
    "dictionary": "lexicon",
    "definition": "meaning",
    "country_code": "nation_code",
    "countrycode": "nationcode",
}

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def _style(name: str) -> str:
    if "." in name:
        return "dot"
    if "_" in name:
        return "snake"
    if "-" in name:
        return "kebab"
    if name[:1].isupper():
        return "pascal"
    return "camel"


def join_words(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    if style == "dot":
        return ".".join(words)
    return words[0] + "".join(w.capitalize() for w in words[1:])


def literal_variant(name: str, taken: set[str]) -> str | None:
    """A case/separator variant of ``name`` (``user_login`` <-> ``userLogin``)."""
    words = split_words(name)
    candidates = []
    if "." in name:
        candidates.append(name.replace(".", "_"))
    style = _style(name)
    for other in ("camel", "snake", "pascal", "kebab"):
        if other != style and words:
            candidates.append(join_words(words, other))
    candidates += [name.upper(), name.capitalize(), name.lower()]
    for c in candidates:
        if (
            c != name
            and c not in taken
            and re.sub(r"[^0-9a-z]", "", c.lower()) == re.sub(r"[^0-9a-z]", "", name.lower())
        ):
            return c
    return None


def synonym_variant(name: str, taken: set[str]) -> str | None:
    """``get_weather`` -> ``fetch_weather``: one word swapped for a synonym."""
    style = _style(name)
    if style == "dot":
        head, _, tail = name.rpartition(".")
        inner = synonym_variant(tail, set())
        return f"{head}.{inner}" if inner and f"{head}.{inner}" not in taken else None
    words = split_words(name)
    for i, w in enumerate(words):
        if w in SYNONYMS:
            new = words[:i] + SYNONYMS[w].split("_") + words[i + 1 :]
            cand = join_words(new, style)
            if cand != name and cand not in taken:
                return cand
    joined = "_".join(words)
    if joined in SYNONYMS:
        cand = join_words(SYNONYMS[joined].split("_"), style)
        if cand not in taken:
            return cand
    return None


def wrong_type(value: Any, schema: Mapping[str, Any], on_the_wire: bool = False) -> Any:
    """A value of a type the schema does not allow, or ``None`` if none is known.

    ``on_the_wire``: the parameter travels as URL/header text, where any scalar is a
    string, so only a structured value is the wrong type for a string parameter."""
    t = schema.get("type")
    types = [t] if isinstance(t, str) else list(t or [])
    if not types:
        return None
    if "string" in types:
        if {"integer", "number"} & set(types):
            return None
        return {"value": "x"} if on_the_wire else 12345
    if "integer" in types or "number" in types:
        return "twelve"
    if "boolean" in types:
        return "yes"
    if "array" in types:
        return "a, b"
    if "object" in types:
        return "key=value"
    return None


def _required(op: Operation) -> list[str]:
    return [p.name for p in op.parameters if p.required]


Mutator = Callable[[Call, Operation, ApiCatalog, random.Random], Call | None]


def e2_1(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    others = [n for n in catalog.names if n != call[0]]
    return (rng.choice(others), dict(call[1])) if others else None


def e2_2(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    new = literal_variant(call[0], set(catalog.names))
    return (new, dict(call[1])) if new else None


def e2_3(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    new = synonym_variant(call[0], set(catalog.names))
    return (new, dict(call[1])) if new else None


def _rename(args: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {(new if k == old else k): v for k, v in args.items()}


def e3_1(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    own = {p.name for p in op.parameters}
    foreign = not_variants(
        own, {p.name for o in catalog.operations if o.name != op.name for p in o.parameters}
    )
    if not foreign or not call[1]:
        return None
    old = next(iter(call[1]))
    return call[0], _rename(call[1], old, rng.choice(foreign))


def e3_2(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    own = {p.name for p in op.parameters}
    for old in call[1]:
        new = literal_variant(old, own)
        if new:
            return call[0], _rename(call[1], old, new)
    return None


def e3_3(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    own = {p.name for p in op.parameters}
    every = {p.name for o in catalog.operations for p in o.parameters}
    for old in call[1]:
        new = synonym_variant(old, every | own)
        if new:
            return call[0], _rename(call[1], old, new)
    return None


def e3_4(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    present = [n for n in _required(op) if n in call[1]]
    if not present:
        return None
    drop = present[0]
    return call[0], {k: v for k, v in call[1].items() if k != drop}


def e4_1(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    for name in call[1]:
        p = op.parameter(name)
        if p is None:
            continue
        wire = p.location in ("path", "query", "header", "cookie")
        bad = wrong_type(call[1][name], p.schema, on_the_wire=wire)
        if bad is not None:
            return call[0], {**call[1], name: bad}
    return None


def e4_2(call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random) -> Call | None:
    for name in call[1]:
        p = op.parameter(name)
        if p is None or not isinstance(p.schema.get("enum"), list):
            continue
        enum = p.schema["enum"]
        if all(isinstance(v, str) for v in enum):
            return call[0], {**call[1], name: "not_a_documented_value"}
        if all(isinstance(v, int) and not isinstance(v, bool) for v in enum):
            return call[0], {**call[1], name: max(enum) + 1000}
    return None


MUTATORS: dict[str, Mutator] = {
    "E2.1": e2_1,
    "E2.2": e2_2,
    "E2.3": e2_3,
    "E3.1": e3_1,
    "E3.2": e3_2,
    "E3.3": e3_3,
    "E3.4": e3_4,
    "E4.1": e4_1,
    "E4.2": e4_2,
}


def render(calls: list[Call]) -> str:
    """Calls in the paper's ``<API>Name(k=v)</API>`` format, one per line."""
    return "\n".join(
        f"<API>{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})</API>"
        for name, args in calls
    )


def garble(text: str, rng: random.Random, index: int) -> str:
    """Three ways real outputs fail to parse: cut off mid-call, no request at all,
    a JSON call that breaks off."""
    kind = index % 3
    if kind == 0:
        cut = text.find("(")
        return text[: cut + 1] + "city='unterminated" if cut >= 0 else "<API>"
    if kind == 1:
        return "I'm sorry, I cannot determine which API to call for this request."
    return '{"name": "' + text[5:15] + '", "arguments": {"a": [1, 2'


# -- mutations of HTTP requests and tool calls built from the raw spec ------------------
#
# The real-spec benchmark (``real_specs.py``) generates requests from the spec document
# itself, not from autofeedback's catalog (the thing under test). A request is a mapping
# ``(location, name) -> value`` (location: path, query, header, cookie, body or
# argument) and its parameters are :class:`Slot` objects read from the raw spec.

Sent = dict[tuple[str, str], Any]


@dataclass(frozen=True)
class Slot:
    """One documented parameter or top-level body field, as the raw spec gives it
    (``schema`` with ``$ref`` followed)."""

    location: str
    name: str
    schema: Mapping[str, Any]
    required: bool
    #: false for a field of a body that documents ``additionalProperties``: an extra
    #: name there is allowed, so renaming it makes no wrong request
    closed: bool = True


#: where a model chooses the parameter name: path names are fixed by the URL template,
#: and clients add headers freely
_NAMED = ("argument", "body", "query")
#: values that travel as text, where only numbers and booleans can have a wrong type
_ON_THE_WIRE = ("path", "query", "header", "cookie")

SentMutator = Callable[[Sent, Sequence[Slot], Sequence[str], random.Random], Sent | None]


def _named_keys(sent: Sent, slots: Sequence[Slot]) -> list[tuple[str, str]]:
    """The documented parameters the request sends whose name a model chose (not the
    credentials of the security scheme, not path parameters)."""
    documented = {(s.location, s.name) for s in slots if s.closed}
    # an object in the query is sent as its own keys (form, explode): its name never shows
    shown = [k for k in sent if not (k[0] == "query" and isinstance(sent[k], Mapping))]
    return sorted(
        (k for k in shown if k[0] in _NAMED and k in documented),
        key=lambda k: (_NAMED.index(k[0]), list(sent).index(k)),
    )


def _rename_sent(sent: Sent, key: tuple[str, str], new: str) -> Sent:
    return {((key[0], new) if k == key else k): v for k, v in sent.items()}


def sent_e3_1(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A parameter renamed to one that only *other* operations of the spec take, and
    that is no spelling or synonym variant of this operation's own (that would be E3.2 /
    E3.3: on a large spec most names exist somewhere)."""
    candidates = not_variants({s.name for s in slots}, set(foreign))
    keys = _named_keys(sent, slots)
    if not candidates or not keys:
        return None
    return _rename_sent(sent, keys[0], rng.choice(candidates))


def not_variants(own: set[str], foreign: set[str]) -> list[str]:
    """The ``foreign`` names that are no spelling or synonym variant of one in ``own``:
    what E3.1 means once a variant of this operation's own parameter is E3.2 / E3.3."""
    near = {_squash(n) for n in own} | {
        _squash(v) for n in own if (v := synonym_variant(n, set())) is not None
    }
    return sorted(n for n in foreign - own if _squash(n) not in near)


def _squash(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def sent_e3_2(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A parameter name written in another case or with other separators."""
    own = {s.name for s in slots}
    for key in _named_keys(sent, slots):
        new = literal_variant(key[1], own)
        if new:
            return _rename_sent(sent, key, new)
    return None


def sent_e3_3(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A parameter name with one word swapped for a synonym (not a name of the spec)."""
    every = {s.name for s in slots} | set(foreign)
    for key in _named_keys(sent, slots):
        new = synonym_variant(key[1], every)
        if new:
            return _rename_sent(sent, key, new)
    return None


def sent_e3_4(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A required query/body/header parameter left out (path ones would change the URL)."""
    order = ("argument", "body", "query", "header", "cookie")
    # a name also sent in another place still reaches the API (Spotify takes ``ids`` in
    # the query or the body): leaving out one copy is no missing parameter
    places: dict[str, int] = {}
    for _, name in sent:
        places[name] = places.get(name, 0) + 1
    required = sorted(
        (
            s
            for s in slots
            if s.required
            and s.location in order
            and (s.location, s.name) in sent
            and places[s.name] == 1
        ),
        key=lambda s: order.index(s.location),
    )
    if not required:
        return None
    drop = (required[0].location, required[0].name)
    return {k: v for k, v in sent.items() if k != drop}


def _slot(slots: Sequence[Slot], key: tuple[str, str]) -> Slot | None:
    return next((s for s in slots if (s.location, s.name) == key), None)


def _value_keys(sent: Sent) -> list[tuple[str, str]]:
    order = ("argument", "body", "query", "path", "header", "cookie")
    return sorted(
        (k for k in sent if k[0] in order), key=lambda k: (order.index(k[0]), list(sent).index(k))
    )


def sent_e4_1(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A value of a type the schema does not allow (on the wire: a word for a number or
    boolean, since any scalar there is text)."""
    for key in _value_keys(sent):
        slot = _slot(slots, key)
        if slot is None:
            continue
        wire = key[0] in _ON_THE_WIRE
        t = slot.schema.get("type")
        types = {t} if isinstance(t, str) else set(t or ())
        if wire and (not types or types - {"integer", "number", "boolean", "null"}):
            continue
        bad = wrong_type(sent[key], slot.schema, on_the_wire=wire)
        if bad is not None:
            return {**sent, key: bad}
    return None


_BAD_FORMAT = {"date": "17/05/2024", "date-time": "yesterday at noon", "email": "not-an-email"}


def sent_e4_2(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """A value outside the documented enum, range or format."""
    for key in _value_keys(sent):
        slot = _slot(slots, key)
        if slot is None:
            continue
        s = slot.schema
        enum = s.get("enum")
        if isinstance(enum, list) and enum:
            if all(isinstance(v, str) for v in enum):
                return {**sent, key: "not_a_documented_value"}
            if all(isinstance(v, int) and not isinstance(v, bool) for v in enum):
                return {**sent, key: max(enum) + 1000}
            continue
        if isinstance(s.get("maximum"), (int, float)) and not isinstance(s["maximum"], bool):
            return {**sent, key: int(s["maximum"]) + 1000}
        if isinstance(s.get("minimum"), (int, float)) and not isinstance(s["minimum"], bool):
            return {**sent, key: int(s["minimum"]) - 1000}
        if s.get("format") in _BAD_FORMAT and s.get("type") in ("string", None):
            return {**sent, key: _BAD_FORMAT[s["format"]]}
    return None


SENT_MUTATORS: dict[str, SentMutator] = {
    "E3.1": sent_e3_1,
    "E3.2": sent_e3_2,
    "E3.3": sent_e3_3,
    "E3.4": sent_e3_4,
    "E4.1": sent_e4_1,
    "E4.2": sent_e4_2,
}


def _template_key(template: str) -> str:
    """The path of a template, variables blanked; a missing leading slash added (a client
    joins server and path with one)."""
    path = re.sub(r"\{[^{}]*\}", "{}", template.partition("?")[0].partition("#")[0])
    return path if path.startswith("/") else "/" + path


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^{}]*\}", _template_key(template).replace("{}", "\0"))
    body = "[^/]+".join(re.escape(p) for p in "".join(parts).split("\0"))
    return re.compile(body + "/?")


def path_variant(
    template: str, taken: set[str], variant: Callable[[str, set[str]], str | None]
) -> str | None:
    """``template`` with one static path segment replaced by ``variant(segment)`` (the
    last one that has a variant), unless the result is another operation's template.
    ``taken`` holds the spec's templates in :func:`_template_key` form.

    >>> path_variant("/search/movie", set(), synonym_variant)
    '/search/film'
    """
    path, sep, query = template.partition("?")
    parts = path.split("/")
    # the varied path must match no documented template, or it is another real endpoint
    # (``/files/Content`` is ``/files/{file_id}``)
    patterns = [_template_regex(t) for t in taken]
    for i in reversed(range(len(parts))):
        seg = parts[i]
        if not seg or "{" in seg or not re.search(r"[A-Za-z]", seg):
            continue
        new = variant(seg, set())
        if not new or new == seg:
            continue
        cand = "/".join([*parts[:i], new, *parts[i + 1 :]])
        concrete = _template_key(cand).replace("{}", "x1")
        if not any(p.fullmatch(concrete) for p in patterns):
            return cand + sep + query
    return None


def synonym_variants(name: str) -> list[str]:
    """Every name ``name`` becomes by swapping one of its words for its synonym
    (:data:`SYNONYMS`), in the name's own style.

    >>> synonym_variants("book_name")
    ['book_title']
    """
    style = _style(name)
    if style == "dot":
        head, _, tail = name.rpartition(".")
        return [f"{head}.{v}" for v in synonym_variants(tail)]
    words = split_words(name)
    out = []
    for i, w in enumerate(words):
        if w in SYNONYMS:
            cand = join_words(words[:i] + SYNONYMS[w].split("_") + words[i + 1 :], style)
            if cand != name and cand not in out:
                out.append(cand)
    return out


def sent_e3_3_taken(
    sent: Sent, slots: Sequence[Slot], foreign: Sequence[str], rng: random.Random
) -> Sent | None:
    """The issue's case: a synonym of this operation's parameter that *another*
    operation takes (``title`` for ``name`` on a large spec). It is still the model's
    slip on this operation (E3.3, suggesting the own name), not a wrong API (E3.1)."""
    own = {s.name for s in slots}
    elsewhere = set(foreign) - own
    for key in _named_keys(sent, slots):
        for cand in synonym_variants(key[1]):
            if cand in elsewhere:
                return _rename_sent(sent, key, cand)
    return None


# -- mutations a repair may undo, and lossy controls (``repair.py``) ----------------------
#
# Each takes a gold call and returns the *record's* ``call`` object (``{"name",
# "arguments"}``; the arguments may be a JSON string, as in an OpenAI tool call), or
# ``None`` where the mutation has no place in that call. The gold is the unchanged call.

RecordCall = dict[str, Any]
CallMutator = Callable[[Call, Operation, ApiCatalog, random.Random], RecordCall | None]

#: keys a model adds that no API of a doc set documents
EXTRA_KEYS = ("verbose", "debug", "request_id", "trace_id", "dry_run", "stream_output")


def _types(schema: Mapping[str, Any]) -> set[str]:
    t = schema.get("type")
    return {t} if isinstance(t, str) else {x for x in t or () if isinstance(x, str)}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _record(name: str, arguments: Any) -> RecordCall:
    return {"name": name, "arguments": arguments}


def _first_argument(
    call: Call, op: Operation, fits: Callable[[Any, Mapping[str, Any]], bool]
) -> str | None:
    for name, value in call[1].items():
        p = op.parameter(name)
        if p is not None and fits(value, p.schema):
            return name
    return None


def _sample(schema: Mapping[str, Any]) -> Any:
    """A plain value of a parameter's documented type, for an added parameter."""
    for key in ("default", "example"):
        if key in schema and schema[key] is not None:
            return schema[key]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    types = _types(schema)
    for t, value in (
        ("integer", 1),
        ("number", 1.5),
        ("boolean", True),
        ("array", []),
        ("object", {}),
    ):
        if t in types or (t == "number" and "float" in types):
            return value
    return "x"


def call_e3_1_added(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """A parameter only another API of the doc set takes, added to the call."""
    own = {p.name for p in op.parameters}
    by_name = {p.name: p for o in catalog.operations if o.name != op.name for p in o.parameters}
    foreign = [n for n in not_variants(own, set(by_name)) if n not in call[1]]
    if not foreign:
        return None
    name = rng.choice(foreign)
    return _record(call[0], {**call[1], name: _sample(by_name[name].schema)})


def call_e3_extra(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """A key no API of the doc set documents, added (``"verbose": true``)."""
    every = {p.name for o in catalog.operations for p in o.parameters}
    keys = [k for k in not_variants(every, set(EXTRA_KEYS)) if k not in call[1]]
    if not keys:
        return None
    return _record(call[0], {**call[1], rng.choice(keys): True})


def call_number_as_text(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """An integer or number argument written as text (``"5"`` for ``5``)."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        return (
            _number(v)
            and bool(_types(s) & {"integer", "number", "float"})
            and ("string" not in _types(s))
        )

    name = _first_argument(call, op, fits)
    if name is None:
        return None
    return _record(call[0], {**call[1], name: json.dumps(call[1][name])})


def call_boolean_as_text(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """A boolean argument written as text (``"true"``)."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        return isinstance(v, bool) and _types(s) == {"boolean"}

    name = _first_argument(call, op, fits)
    if name is None:
        return None
    return _record(call[0], {**call[1], name: "true" if call[1][name] else "false"})


def call_arguments_as_json(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """The whole arguments encoded twice: the JSON text of the JSON text (an OpenAI
    ``arguments`` string that decodes to a string)."""
    if not call[1]:
        return None
    return _record(call[0], json.dumps(json.dumps(call[1])))


def call_argument_as_json(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """An object or array argument given as its JSON text."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        types = _types(s)
        return (isinstance(v, dict) and bool(types & {"object", "dict"})) or (
            isinstance(v, list) and bool(types & {"array", "tuple"})
        )

    name = _first_argument(call, op, fits)
    if name is None or "string" in _types(op.parameter(name).schema):  # type: ignore[union-attr]
        return None
    return _record(call[0], {**call[1], name: json.dumps(call[1][name])})


def call_scalar_for_array(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """The one item of a one-item array argument given without the array."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        return (
            isinstance(v, list)
            and len(v) == 1
            and not isinstance(v[0], (list, dict))
            and bool(_types(s) & {"array", "tuple"})
        )

    name = _first_argument(call, op, fits)
    if name is None:
        return None
    return _record(call[0], {**call[1], name: call[1][name][0]})


def call_fraction_for_integer(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """Control: a fraction where an integer is documented (no lossless repair)."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        return _number(v) and _types(s) == {"integer"}

    name = _first_argument(call, op, fits)
    if name is None:
        return None
    return _record(call[0], {**call[1], name: int(call[1][name]) + 0.5})


def call_object_for_string(
    call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
) -> RecordCall | None:
    """Control: an object where a string is documented (its text would be a guess)."""

    def fits(v: Any, s: Mapping[str, Any]) -> bool:
        return isinstance(v, str) and _types(s) == {"string"} and "enum" not in s

    name = _first_argument(call, op, fits)
    if name is None:
        return None
    return _record(call[0], {**call[1], name: {"value": call[1][name]}})


def _as_record(mutator: Mutator) -> CallMutator:
    def mutate(
        call: Call, op: Operation, catalog: ApiCatalog, rng: random.Random
    ) -> RecordCall | None:
        out = mutator(call, op, catalog, rng)
        return None if out is None else _record(*out)

    mutate.__doc__ = mutator.__doc__
    return mutate


#: row label -> (the finding code a checker reports, whether a repair is expected
#: (False: a control, where every repair is wrong), mutator)
REPAIR_MUTATORS: dict[str, tuple[str, bool, CallMutator]] = {
    "E2.2": ("E2.2", True, _as_record(e2_2)),
    "E2.3": ("E2.3", True, _as_record(e2_3)),
    "E3.1 added": ("E3.1", True, call_e3_1_added),
    "E3.2": ("E3.2", True, _as_record(e3_2)),
    "E3.3": ("E3.3", True, _as_record(e3_3)),
    "E3 extra key": ("E3", True, call_e3_extra),
    "E4.1 number as text": ("E4.1", True, call_number_as_text),
    "E4.1 boolean as text": ("E4.1", True, call_boolean_as_text),
    "E4.1 arguments as JSON text": ("E4.1", True, call_arguments_as_json),
    "E4.1 argument as JSON text": ("E4.1", True, call_argument_as_json),
    "E4.1 scalar for array": ("E4.1", True, call_scalar_for_array),
    "E4.1 fraction for integer (lossy)": ("E4.1", False, call_fraction_for_integer),
    "E4.1 object for string (lossy)": ("E4.1", False, call_object_for_string),
}
