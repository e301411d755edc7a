"""Rules a parameter's description states in words and its schema does not hold.

Real APIs refuse values for reasons no schema says: ``"The date. Format: %Y-%m-%d"``
on a plain ``string``, ``"How many results (1-50)"`` on a bare ``integer``, ``"Must be
uppercase"``, ``"must be in the future"``. The static scan does not act on such words
(it would be guessing where the docs were not exact); the sandbox
(:mod:`autofeedback.serve._sandbox`) enforces them the way a real server does, and the dynamic
check (:mod:`autofeedback.loop._explain`) reads them back to say which part of a refused
request a terse error concerns.

Read from the text alone, for any spec, only where the schema does not already say it:

========  ==========================================================================
kind      what the description says
========  ==========================================================================
format    a date/time layout: ``%Y-%m-%d %H:%M:%S`` (strftime) or ``YYYY-MM-DD``,
          ``HH:MM``, ``MM/DD/YYYY`` (tokens); a value must parse with it
range     bounds of a number: ``1-50``, ``between 1 and 50``, ``at most 50``,
          ``Minimum: 1``, ``no more than 50``, ``up to 50``
count     the same bounds on how many items an array (or a comma-separated list) holds:
          ``A maximum of 50 IDs``
length    bounds on a text's length: ``at most 100 characters``
future    a date/time ``in the future`` (``past``: ``in the past``)
case      ``must be uppercase`` / ``lowercase``
========  ==========================================================================

>>> from autofeedback.core._model import Parameter
>>> p = Parameter("date", "argument", {"type": "string"}, description="Format: %Y-%m-%d.")
>>> [r.kind for r in param_rules(p)], param_rules(p)[0].shape
(['format'], 'YYYY-MM-DD')
>>> param_rules(p)[0].holds("2023-03-26"), param_rules(p)[0].holds("March 26th")
(True, False)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from autofeedback.core._model import Operation, Parameter

__all__ = ["DocRule", "broken_rules", "operation_rules", "param_rules", "request_values"]

#: A description longer than this is read only up to it (a rule sits near the start).
_MAX_TEXT = 4000

_STRFTIME = re.compile(r"%[YmdHMSyIpbBjfzZaA](?:[-/:.,T ]{0,3}%[YmdHMSyIpbBjfzZaA])+")
_TOKENS = re.compile(
    r"(?<![A-Za-z])(?:YYYY|YY|MM|DD|HH|hh|mm|SS|ss)"
    r"(?:(?:[-/:. T]|, )?(?:YYYY|YY|MM|DD|HH|hh|mm|SS|ss|Z))+(?![A-Za-z])"
)
_TOKEN_DIRECTIVE = {"YYYY": "%Y", "YY": "%y", "DD": "%d", "HH": "%H", "hh": "%H", "mm": "%M"}
_SHAPE = {
    "%Y": "YYYY",
    "%y": "YY",
    "%m": "MM",
    "%d": "DD",
    "%H": "HH",
    "%I": "hh",
    "%M": "mm",
    "%S": "ss",
    "%p": "AM/PM",
    "%b": "Mon",
    "%B": "Month",
    "%j": "DDD",
    "%f": "ffffff",
    "%z": "+HHMM",
    "%Z": "TZ",
    "%a": "Day",
    "%A": "Weekday",
}
_NUM = r"(-?\d+(?:\.\d+)?)"
_RANGES = (
    re.compile(rf"\bbetween {_NUM} and {_NUM}", re.I),
    re.compile(rf"\bfrom {_NUM} to {_NUM}\b", re.I),
    re.compile(rf"(?<![\w.\-]){_NUM} ?(?:-|–|—|to) ?{_NUM}(?![\w.\-])", re.I),
)
_HIGH = re.compile(
    rf"\b(?:at most|maximum(?: value)?(?: is| of)?:?|max(?:imum)?\.?:|no more than|not more than"
    rf"|up to|cannot exceed|must not exceed|less than or equal to|not greater than) {_NUM}",
    re.I,
)
_LOW = re.compile(
    rf"\b(?:at least|minimum(?: value)?(?: is| of)?:?|min(?:imum)?\.?:|no less than|not less than"
    rf"|greater than or equal to) {_NUM}",
    re.I,
)
_CHARS = re.compile(r"\bchar(?:acter)?s?\b", re.I)
_FUTURE = re.compile(
    r"\b(?:in the future|future (?:date|time)|later than (?:now|the current time)"
    r"|cannot be in the past|must not be in the past|not in the past)\b",
    re.I,
)
_PAST = re.compile(r"\b(?:in the past|past (?:date|time)|earlier than (?:now|today))\b", re.I)
_NOT_PAST = re.compile(r"\b(?:cannot|must not|not) (?:be )?in the past\b", re.I)
_UPPER = re.compile(r"\b(?:must be|in|all) (?:upper ?case|upper-case|capital letters)\b", re.I)
_LOWER = re.compile(r"\b(?:must be|in|all) (?:lower ?case|lower-case)\b", re.I)
_COMMA = re.compile(r"comma[- ]separated|separated by commas", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`_*])|\n+")


@dataclass(frozen=True)
class DocRule:
    """One rule of one parameter, stated in its description: ``kind`` (see the module
    table), ``says`` the sentence that states it, ``shape`` how the docs write a good
    value (``YYYY-MM-DD``, ``1-50``)."""

    parameter: str
    location: str
    kind: str
    says: str
    shape: str
    layout: str | None = None
    low: float | None = None
    high: float | None = None

    @property
    def error_kind(self) -> str:
        """The sandbox's error kind for a value that breaks it (``bad_format`` for a
        layout, ``bad_value`` for the rest)."""
        return "bad_format" if self.kind == "format" else "bad_value"

    def holds(self, value: Any, *, now: dt.datetime | None = None) -> bool:
        """Whether ``value`` keeps this rule (a value of another type is not judged:
        the schema's own check does that)."""
        if self.kind == "format":
            return not isinstance(value, str) or _parses(value, self.layout or "")
        if self.kind == "range":
            number = _number(value)
            return number is None or _within(number, self.low, self.high)
        if self.kind == "count":
            if isinstance(value, list):
                return _within(len(value), self.low, self.high)
            if isinstance(value, str):
                return _within(len([v for v in value.split(",") if v.strip()]), self.low, self.high)
            return True
        if self.kind == "length":
            return not isinstance(value, str) or _within(len(value), self.low, self.high)
        if self.kind == "case":
            if not isinstance(value, str):
                return True
            return value == (value.upper() if self.shape == "uppercase" else value.lower())
        if self.kind in ("future", "past"):
            when = _moment(value, self.layout)
            if when is None:
                return True  # not a date it can read: a format rule says so, if any
            now = now or dt.datetime.now()
            if when.tzinfo is not None:
                when = when.astimezone().replace(tzinfo=None)
            return when > now if self.kind == "future" else when < now
        return True

    def __str__(self) -> str:
        return f"{self.parameter}: {self.says}"


def _within(number: float, low: float | None, high: float | None) -> bool:
    return (low is None or number >= low) and (high is None or number <= high)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _parses(value: str, layout: str) -> bool:
    value = value.strip()
    if "%Y" not in layout and "%y" not in layout:
        # a leap year given, so that "02-29" parses (and Python 3.13 does not warn of a
        # day of month read without a year)
        value, layout = f"2000|{value}", f"%Y|{layout}"
    try:
        dt.datetime.strptime(value, layout)
    except ValueError:
        return False
    return True


def _moment(value: Any, layout: str | None) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if layout:
        try:
            return dt.datetime.strptime(text, layout)
        except ValueError:
            pass
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _types(schema: Mapping[str, Any]) -> set[str]:
    t = schema.get("type")
    return set(t) if isinstance(t, list) else ({t} if isinstance(t, str) else set())


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]``."""
    cut = [0]
    cut += [m.end() for m in _SENTENCE.finditer(text) if m.end() <= start]
    begin = cut[-1]
    stop = next((m.start() for m in _SENTENCE.finditer(text, end)), len(text))
    return " ".join(text[begin:stop].split())[:300]


def _token_layout(tokens: str) -> str:
    """``YYYY-MM-DD HH:mm`` -> ``%Y-%m-%d %H:%M``: ``MM`` after an hour is minutes."""
    out, hour = [], False
    for part in re.split(r"(YYYY|YY|MM|DD|HH|hh|mm|SS|ss|Z)", tokens):
        if part == "MM":
            out.append("%M" if hour else "%m")
        elif part in ("SS", "ss"):
            out.append("%S")
        elif part == "Z":
            out.append("Z")
        elif part in _TOKEN_DIRECTIVE:
            hour = hour or part in ("HH", "hh")
            out.append(_TOKEN_DIRECTIVE[part])
        else:
            out.append(part.replace("%", "%%"))
    return "".join(out)


def _shape(layout: str) -> str:
    return re.sub(r"%[A-Za-z]", lambda m: _SHAPE.get(m.group(0), m.group(0)), layout)


def param_rules(param: Parameter) -> tuple[DocRule, ...]:
    """The rules ``param``'s description states that its schema does not.

    >>> p = Parameter("limit", "query", {"type": "integer"}, description="Results (1-50).")
    >>> r = param_rules(p)[0]
    >>> r.kind, r.low, r.high, r.holds("20"), r.holds(80)
    ('range', 1.0, 50.0, True, False)
    >>> param_rules(Parameter("limit", "query", {"type": "integer", "maximum": 50},
    ...     description="Results (1-50)."))
    ()
    """
    text = (param.description or "")[:_MAX_TEXT]
    if not text.strip():
        return ()
    schema = param.schema if isinstance(param.schema, Mapping) else {}
    types = _types(schema)
    out: list[DocRule] = []

    def add(kind: str, m: re.Match[str], shape: str, **extra: Any) -> None:
        says = _sentence(text, m.start(), m.end())
        out.append(DocRule(param.name, param.location, kind, says, shape, **extra))

    texty = not types or "string" in types
    layout = None
    if texty and not any(k in schema for k in ("format", "pattern", "enum", "const")):
        m = _STRFTIME.search(text)
        if m is not None:
            layout = m.group(0).strip(" ,.")
        else:
            m = _TOKENS.search(text)
            if m is not None:
                layout = _token_layout(m.group(0))
        if m is not None and layout:
            add("format", m, _shape(layout), layout=layout)
    numeric = bool(types & {"integer", "number"})
    many = "array" in types or (texty and bool(_COMMA.search(text)))
    chars = texty and bool(_CHARS.search(text))
    if numeric and not any(
        k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    ):
        _bounds(text, "range", add)
    elif many and not any(k in schema for k in ("minItems", "maxItems")):
        _bounds(text, "count", add)
    elif chars and not any(k in schema for k in ("minLength", "maxLength")):
        _bounds(text, "length", add)
    dated = layout is not None or schema.get("format") in ("date", "date-time")
    if dated or re.search(r"date|time", param.name, re.I):
        m = _FUTURE.search(text) or _NOT_PAST.search(text)
        if m is not None:
            add("future", m, "a moment in the future", layout=layout)
        else:
            m = _PAST.search(text)
            if m is not None:
                add("past", m, "a moment in the past", layout=layout)
    if texty and "enum" not in schema and "pattern" not in schema:
        m = _UPPER.search(text)
        if m is not None:
            add("case", m, "uppercase")
        else:
            m = _LOWER.search(text)
            if m is not None:
                add("case", m, "lowercase")
    return tuple(out)


def _bounds(text: str, kind: str, add: Any) -> None:
    """A ``low-high`` range, else an upper and/or a lower bound, as one rule."""
    for pattern in _RANGES:
        for found in pattern.finditer(text):
            first, last = float(found.group(1)), float(found.group(2))
            if first < last:
                add(kind, found, f"{_n(first)}-{_n(last)}", low=first, high=last)
                return
    high_m, low_m = _HIGH.search(text), _LOW.search(text)
    m = high_m or low_m
    if m is None:
        return
    high = float(high_m.group(1)) if high_m else None
    low = float(low_m.group(1)) if low_m else None
    if low is not None and high is not None and low > high:
        return
    shape = (
        f"{_n(low)}-{_n(high)}"
        if low is not None and high is not None
        else f"at most {_n(high)}"
        if high is not None
        else f"at least {_n(low)}"
    )
    add(kind, m, shape, low=low, high=high)


def _n(x: float | None) -> str:
    return "" if x is None else (str(int(x)) if float(x).is_integer() else str(x))


def operation_rules(op: Operation) -> tuple[DocRule, ...]:
    """Every parameter's rules, in the operation's parameter order (top-level body
    properties are parameters too, see :class:`~autofeedback.core._model.Operation`)."""
    return tuple(r for p in op.parameters for r in param_rules(p))


def request_values(
    op: Operation,
    *,
    path: Mapping[str, Any] | None = None,
    query: Mapping[str, Any] | None = None,
    headers: Mapping[str, Any] | None = None,
    body: Any = None,
) -> dict[tuple[str, str], Any]:
    """The values a request gives ``op``'s parameters, by ``(location, name)``; a
    function's arguments (and an HTTP body's top-level fields) are read from ``body``."""
    out: dict[tuple[str, str], Any] = {}
    lowered = {str(k).lower(): v for k, v in (headers or {}).items()}
    for p in op.parameters:
        source: Mapping[str, Any] | None
        if p.location == "path":
            source = path
        elif p.location == "query":
            source = query
        elif p.location == "header":
            if p.name.lower() in lowered:
                out[(p.location, p.name)] = lowered[p.name.lower()]
            continue
        elif p.location in ("body", "argument"):
            source = body if isinstance(body, Mapping) else None
        else:
            continue
        if source is not None and p.name in source:
            out[(p.location, p.name)] = source[p.name]
    return out


def broken_rules(
    rules: tuple[DocRule, ...],
    values: Mapping[tuple[str, str], Any],
    *,
    now: dt.datetime | None = None,
) -> Iterator[tuple[DocRule, Any]]:
    """Each rule a value breaks, with the value (one per parameter: its first broken rule,
    so that a date in the wrong layout is not also "not in the future").

    >>> p = Parameter("time", "argument", {"type": "string"},
    ...     description="Format: %Y-%m-%d %H:%M:%S")
    >>> [(str(r), v) for r, v in broken_rules(param_rules(p), {("argument", "time"): "3 pm"})]
    [('time: Format: %Y-%m-%d %H:%M:%S', '3 pm')]
    """
    done: set[tuple[str, str]] = set()
    for rule in rules:
        key = (rule.location, rule.parameter)
        if key in done or key not in values:
            continue
        value = values[key]
        if value is None or rule.holds(value, now=now):
            continue
        done.add(key)
        yield rule, value
