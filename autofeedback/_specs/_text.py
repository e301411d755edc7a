"""Spec text -> the JSON data model: JSON, YAML (libyaml's C parser when present) and
JSON Lines, with YAML 1.2 scalars and a bound on what YAML aliases may expand to."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import re
from typing import Any

from autofeedback._specs._yaml_events import yaml_key as _yaml_key
from autofeedback.core._exceptions import SpecError

__all__ = ["MAX_DEPTH", "MAX_NODES", "bound_depth", "parse_json_lines", "parse_text"]

#: The deepest a spec may nest (objects and lists). Real specs stay under 40 (Stripe's
#: 7 MB spec: 22); the walkers after the parser recurse, and libyaml's composer recurses
#: in C, where 50,000 levels is a segmentation fault rather than an exception.
MAX_DEPTH = 128

#: The most values a parsed document may hold once YAML aliases are expanded. A real
#: 3 MB spec (OpenAI's) holds 61,000; an alias bomb (a few lines whose
#: aliases nest) holds billions and would hang or exhaust memory wherever it is walked.
MAX_NODES = 5_000_000


@functools.cache
def _loader() -> Any:
    """A safe loader (libyaml's ``CSafeLoader`` when PyYAML was built with it: about six
    times faster on a 3 MB spec) with YAML 1.2 scalars: only ``true``/``false`` are
    booleans (a parameter named ``on`` or an enum value ``no`` stays a string) and
    timestamps stay the text the author wrote (``example: 2020-01-31``). Made, and
    PyYAML imported, on the first YAML text: a JSON spec or a cached one needs neither."""
    import yaml

    safe: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class YamlLoader(safe):  # type: ignore[misc]
        pass

    YamlLoader.yaml_implicit_resolvers = {
        first: [
            (tag, regexp)
            for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    YamlLoader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    return YamlLoader


def _yaml_error() -> type[Exception]:
    """PyYAML's ``YAMLError`` (used in ``except`` clauses: evaluated once raised)."""
    import yaml

    return yaml.YAMLError


def _load_yaml(text: str, source: str) -> Any:
    """``yaml.load`` of text whose depth :func:`_bound_yaml_depth` bounded already."""
    import yaml

    try:
        return yaml.load(text, Loader=_loader())  # a SafeLoader subclass: no arbitrary objects
    except RecursionError as exc:
        raise SpecError("the document is nested too deeply", source=source) from exc
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise SpecError(f"a value cannot be read: {str(exc).split(':')[0]}", source=source) from exc


_LINE_HEAD = re.compile(r"\n[ ?-]{16,}")  # indentation and compact "- - -" entries
_FLOW = re.compile(r"[\[\]{}]")


def _bound_yaml_depth(text: str, source: str) -> None:
    """Refuse YAML nested deeper than :data:`MAX_DEPTH` *before* the composer sees it.

    A cheap upper bound first (the characters of indentation and compact ``- - -``
    entries, plus flow brackets, quotes ignored); only text whose bound is over the
    limit has its real depth counted, from the parser's events, which libyaml produces
    without recursing. Aliases can deepen the document after this: :func:`_checked`
    bounds that."""
    indent = max([16, *map(len, _LINE_HEAD.findall("\n" + text))])  # \n + indentation
    flow = deepest = 0
    for m in _FLOW.finditer(text):
        flow += 1 if m.group() in "[{" else -1
        deepest = max(deepest, flow)
        if indent + deepest > MAX_DEPTH:
            break
    if indent + deepest <= MAX_DEPTH:
        return
    import yaml

    depth = 0
    try:
        for event in yaml.parse(text, Loader=_loader()):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(source)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):  # libyaml's own bound (PyYAML >= 6.0.4 wheels)
            raise _too_deep(source) from exc
        return  # the real load reports where the syntax breaks


def _too_deep(source: str) -> SpecError:
    return SpecError(f"the document nests deeper than {MAX_DEPTH} levels", source=source)


def bound_depth(document: Any, source: str, *, tree: bool = False) -> Any:
    """``document`` when it nests at most :data:`MAX_DEPTH` levels (walked without
    recursion; shared YAML anchors are walked once). ``tree``: nothing in ``document``
    is shared (``json.loads`` made it), so no identity is remembered: 0.03 s instead of
    0.08 s for an 8.6 MB spec."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(source)
        if not tree:
            if id(value) in seen:
                continue
            seen.add(id(value))
        children = value.values() if isinstance(value, dict) else value
        below = depth + 1
        for c in children:  # pushed in the order extend() pushed them: the same walk
            kind = type(c)
            if kind is dict or kind is list or isinstance(c, (dict, list)):
                stack.append((c, below))
    return document


def _load_json(text: str, source: str) -> Any:
    """``json.loads`` with its two ways to fail on hostile input made :class:`SpecError`:
    nesting past the C scanner's recursion limit, and integers of more than 4,300 digits."""
    try:
        document = json.loads(text)
    except RecursionError as exc:
        raise _too_deep(source) from exc
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise SpecError(f"a value cannot be read: {str(exc).split(':')[0]}", source=source) from exc
    if not isinstance(document, (dict, list)):
        return document
    return bound_depth(document, source, tree=True)


def parse_text(text: str, source: str) -> Any:
    stripped = text.lstrip()
    if not stripped:
        raise SpecError("the file is empty", source=source)
    if stripped[0] in "{[":
        try:
            return _load_json(text, source)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and _looks_like_json_lines(text):
                return parse_json_lines(text, source)
            json_error = exc
        # JSON-looking text may still be YAML flow style; report the JSON error if not.
        try:
            return _load_yaml_json(text, source)
        except _yaml_error():
            raise SpecError(
                f"invalid JSON: {json_error.msg}",
                source=source,
                where=f"line {json_error.lineno}, column {json_error.colno}",
            ) from json_error
    try:
        jsonified = _load_yaml_json(text, source)
    except _yaml_error() as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"invalid YAML: {problem}", source=source, where=where) from exc
    if not isinstance(jsonified, (dict, list)):
        raise SpecError("not a JSON or YAML document (expected an object or a list)", source=source)
    return jsonified


def _load_yaml_json(text: str, source: str) -> Any:
    """``_checked(_jsonify(_load_yaml(text, source)))``: built from libyaml's events
    where the document is made of what specs are made of (:mod:`._yaml_events`, four
    times faster), else through ``yaml.load``. A document the builder made without
    meeting an alias is not walked for alias bombs: it cannot expand past its text (the
    text's pattern for an alias also matches ``*bold*`` in a description)."""
    from autofeedback._specs import _yaml_events

    _bound_yaml_depth(text, source)
    facts: dict[str, Any] = {}
    try:
        built = _yaml_events.load(text, _loader(), facts)
    except _yaml_events.Unusual:
        pass
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise SpecError(f"a value cannot be read: {str(exc).split(':')[0]}", source=source) from exc
    else:
        return built if not facts["aliases"] else _checked(built, source, text)
    document = _load_yaml(text, source)
    try:
        jsonified = _jsonify(document, {})
    except RecursionError as exc:
        raise _too_deep(source) from exc
    return _checked(jsonified, source, text)


def _looks_like_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and all(line.lstrip()[:1] in "{[" for line in lines)


def parse_json_lines(text: str, source: str) -> list[Any]:
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(_load_json(line, source))
        except json.JSONDecodeError as exc:
            raise SpecError(
                f"invalid JSON: {exc.msg}",
                source=source,
                where=f"line {number}, column {exc.colno}",
            ) from exc
    if not items:
        raise SpecError("the file is empty", source=source)
    return items


def _jsonify(value: Any, memo: dict[int, Any]) -> Any:
    """YAML gives int keys (``200:``) and dates; make it the JSON data model. ``memo``
    keeps YAML anchors shared (and recursive aliases finite)."""
    if isinstance(value, dict):
        if id(value) in memo:
            return memo[id(value)]
        out: dict[str, Any] = {}
        memo[id(value)] = out
        for k, v in value.items():
            out[_yaml_key(k)] = _jsonify(v, memo)
        return out
    if isinstance(value, list):
        if id(value) in memo:
            return memo[id(value)]
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(_jsonify(v, memo) for v in value)
        return items
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s,\]}]")


def _checked(document: Any, source: str, text: str) -> Any:
    """``document`` when its expanded size stays under :data:`MAX_NODES` (counted once per
    shared node, so the check is linear in the parsed size). Text without aliases cannot
    expand beyond its own size and is not walked."""
    if not _ALIAS.search(text):
        return document
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        if not isinstance(value, (dict, list)):
            return 1
        key = id(value)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # a recursive alias counts once: walkers cut it like a $ref cycle
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_NODES:
                break
        sizes[key] = total
        return total

    try:
        total = size(document)
    except RecursionError as exc:
        raise SpecError("the document is nested too deeply", source=source) from exc
    if total > MAX_NODES:
        raise SpecError(
            f"YAML aliases expand to more than {MAX_NODES:,} values (an alias bomb?); "
            "refusing to load",
            source=source,
        )
    return bound_depth(document, source)
