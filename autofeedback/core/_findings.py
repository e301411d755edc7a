"""Findings: what the scanner says about a request, as immutable values.

Codes follow the AutoFeedback paper's taxonomy (Liu et al. 2024, Table 2), extended
where marked:

====  ==================================================================
E1    no request, or one that cannot be parsed
E2.1  a real API, but not one that fits the instruction (retriever-based)
E2.2  a literal variant of a real API name (``user_login`` for ``userLogin``)
E2.3  a made-up name semantically close to a real one
E2    any other unknown API name
E3.1  a parameter name that belongs to another API
E3.2  a literal variant of a documented parameter name
E3.3  a made-up parameter name semantically close to a documented one
E3.4  a required parameter is missing (beyond the paper)
E3    any other unknown parameter, or one sent in the wrong place
E4.1  a value whose type does not match the documented type
E4.2  a value that breaks a documented constraint: enum, format, pattern, range
      (beyond the paper)
E5.1  a value refers to a variable or step that nothing earlier produced
      (data flow in a sequence, beyond the paper)
E5.2  a reference path the producer's documented response does not have
E5.3  an identifier-, key- or credential-like value grounded nowhere, or a placeholder
E5.4  a referenced field whose documented type does not fit the parameter
E5    any other data-flow problem
====  ==================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CODES", "Finding", "Repair", "Severity"]

Severity = Literal["error", "warning"]

#: Every finding code, in the order the paper checks them, with a short title.
CODES: dict[str, str] = {
    "E1": "no parsable request",
    "E2.1": "API not fitting the instruction",
    "E2.2": "literal variant of an API name",
    "E2.3": "semantic variant of an API name",
    "E2": "unknown API name",
    "E3.1": "parameter of another API",
    "E3.2": "literal variant of a parameter name",
    "E3.3": "semantic variant of a parameter name",
    "E3.4": "missing required parameter",
    "E3": "unknown parameter",
    "E4.1": "value type mismatch",
    "E4.2": "value constraint violation",
    "E5.1": "value from nothing produced earlier",
    "E5.2": "reference path not in the documented response",
    "E5.3": "ungrounded or placeholder value",
    "E5.4": "referenced field of the wrong type",
    "E5": "data-flow problem",
}


def _order(code: str) -> int:
    return list(CODES).index(code)


@dataclass(frozen=True)
class Repair:
    """One change autofeedback made to a call because the docs and the trace left one
    answer: the finding's ``code`` and ``location``, the value (or name) ``before`` and
    ``after``. A renamed parameter's location is its old name; a dropped one has
    ``after=None``.

    >>> r = Repair("E3.2", ("argument", "City"), "City", "city")
    >>> str(r)
    "E3.2 argument.City: 'City' -> 'city'"
    >>> r.as_dict()["after"]
    'city'
    """

    code: str
    location: tuple[str, ...]
    before: Any
    after: Any

    def __str__(self) -> str:
        where = ".".join(self.location)
        after = "(dropped)" if self.after is None else _shown(self.after)
        return f"{self.code} {where}: {_shown(self.before)} -> {after}"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"code", "location", "before", "after"}``."""
        return {
            "code": self.code,
            "location": list(self.location),
            "before": _jsonable(self.before),
            "after": _jsonable(self.after),
        }


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a request.

    ``location`` is a path into the request, e.g. ``("query", "limit")`` or
    ``("api",)``; ``got`` is what the model wrote, ``expected`` what the docs say
    (a name, a type, an enum...), ``suggestion`` the closest valid alternative when
    there is one. ``doc`` carries the documentation line the check relied on.

    >>> f = Finding("E3.2", ("query", "limt"), "limt", expected="limit",
    ...             message="unknown query parameter 'limt'", suggestion="limit")
    >>> str(f)
    "E3.2 query.limt: unknown query parameter 'limt' — did you mean 'limit'?"
    """

    code: str
    location: tuple[str, ...]
    got: Any
    expected: Any = None
    message: str = ""
    severity: Severity = "error"
    suggestion: str | None = None
    operation: str | None = None
    doc: str = ""
    fix: Repair | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}")

    @property
    def title(self) -> str:
        return CODES[self.code]

    @property
    def rank(self) -> int:
        """Position of the code in the paper's checking order (E1 first)."""
        return _order(self.code)

    def __str__(self) -> str:
        where = ".".join(self.location)
        text = f"{self.code} {where}: {self.message}" if where else f"{self.code}: {self.message}"
        if self.suggestion is not None and self.suggestion not in self.message:
            text += f" — did you mean {self.suggestion!r}?"
        if self.fix is not None:
            after = "dropped" if self.fix.after is None else _shown(self.fix.after)
            text += f" [repaired: {_shown(self.fix.before)} -> {after}]"
        return text

    def as_dict(self) -> dict[str, Any]:
        """The JSON form used by ``autofeedback audit --format jsonl``."""
        out = {
            "code": self.code,
            "location": list(self.location),
            "got": _jsonable(self.got),
            "expected": _jsonable(self.expected),
            "message": self.message,
            "severity": self.severity,
            "suggestion": self.suggestion,
            "operation": self.operation,
        }
        if self.fix is not None:  # only on a repaired finding: other reports stay as they were
            out["fix"] = {"before": _jsonable(self.fix.before), "after": _jsonable(self.fix.after)}
        return out


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)
