"""What every format's detector shares: the scan state and its budgets, candidates,
problems, and small text helpers."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._model import ApiRequest

MAX_INPUT_CHARS = 1_000_000

# A real output never holds this many fragments of one format; past it the text is
# hostile and scanning that format stops, so the total work stays small.
_MAX_ATTEMPTS = 1_000
_MAX_CURL_CHARS = 100_000
# Items (commas, colons, brackets...) in one Python-style call, and in all of them.
_MAX_CALL_WEIGHT = 5_000
_MAX_CALL_SPAN = 100_000
_AST_BUDGET = 20_000
_NO_REQUEST = "no API request found in the output"
_HTTP_METHODS = frozenset(
    {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"}
)


class RequestFormatError(AutoFeedbackError, ValueError):
    """A call or HTTP record does not have the shape of an API request.

    A :class:`ValueError` too, since callers hand it malformed values.
    """


@dataclass(frozen=True)
class ParseResult:
    """The requests found in one LLM output, in order of appearance.

    ``problem`` is set only when no request could be parsed: one line saying which
    format came closest and where it broke; ``format_hint`` names that format.
    """

    requests: tuple[ApiRequest, ...]
    problem: str | None = None
    format_hint: str | None = None
    #: The model's own call rewritten as ``<API>Name(k=v)</API>``, when the broken
    #: output still shows it (a truncated JSON object, a tag that is never closed).
    suggestion: str | None = None


# --------------------------------------------------------------------------- helpers


class _Problem(Exception):
    """Why one candidate is not a request; ``syntax`` marks text that does not parse."""

    def __init__(self, reason: str, *, syntax: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.syntax = syntax


class _NotLiteral(Exception):
    """An AST node that is code, not a literal value."""


@dataclass
class _Candidate:
    """One match of one format: requests, or a problem, or (neither) a claimed span."""

    start: int
    end: int
    format: str
    requests: tuple[ApiRequest, ...] = ()
    problem: str | None = None
    #: A claiming candidate hides the candidates of other formats inside its span.
    claims: bool = True
    #: Said when nothing better is found (a JSON object that is not a call).
    note: str | None = None
    rank: int = 0
    #: For a problem: the call as far as it can be read, in the ``<API>`` format.
    suggestion: str | None = None


@dataclass
class _Scan:
    """The text under scan, the spans claimed so far, and the budgets that keep
    hostile input cheap (JSON retries, Python parsing, attempts per format)."""

    text: str
    json_budget: int = 0
    #: Python's parser is slow on dense input (~20 µs per list item): a global cap.
    ast_budget: int = _AST_BUDGET
    failures: dict[str, int] = field(default_factory=dict)
    #: Disjoint spans already claimed by earlier detectors, sorted; a later detector
    #: skips matches starting inside them (they would be dropped as contained anyway).
    claimed: list[tuple[int, int]] = field(default_factory=list)
    claimed_starts: list[int] = field(default_factory=list)

    def claim(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self.claimed + [s for s in spans if s[1] > s[0]]):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self.claimed = merged
        self.claimed_starts = [start for start, _ in merged]

    def claimed_end(self, pos: int) -> int | None:
        """The end of the claimed span strictly containing ``pos``, if any."""
        i = bisect_right(self.claimed_starts, pos) - 1
        if i >= 0 and self.claimed[i][0] < pos < self.claimed[i][1]:
            return self.claimed[i][1]
        return None

    def __post_init__(self) -> None:
        self.json_budget = 2 * len(self.text) + 200_000

    def charge(self, src: str) -> None:
        """Pay for parsing ``src`` with :func:`ast.parse`, or refuse."""
        weight = sum(map(src.count, ",:=([{-+'\"")) + len(src) // 1000
        if weight > _MAX_CALL_WEIGHT:
            raise _Problem(f"it is too large to check ({len(src)} characters)")
        if weight > self.ast_budget:
            raise _GiveUp("the Python-style calls in the output are too large to check")
        self.ast_budget -= weight

    def decode(self, pos: int) -> tuple[Any, int]:
        """``raw_decode`` at ``pos``; failures become a :class:`_Problem`."""
        try:
            return _DECODER.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            # An unterminated string is reported where it starts but scanned to the end.
            reach = len(self.text) if exc.msg.startswith("Unterminated") else exc.pos
            self.json_budget -= max(1, reach - pos)
            raise _Problem(f"the JSON does not parse: {_json_where(exc, pos)}") from None
        except RecursionError:
            self.json_budget -= 1_000
            raise _Problem("the JSON is nested too deeply") from None
        except MemoryError:
            raise _Problem("the JSON is too large") from None
        except ValueError as exc:  # e.g. an integer with more digits than Python allows
            self.json_budget -= 1_000
            raise _Problem(f"the JSON does not parse: {exc}") from None

    def tick(self, fmt: str) -> None:
        """Count one attempt at ``fmt``; raise :class:`_GiveUp` past the cap."""
        self.failures[fmt] = self.failures.get(fmt, 0) + 1
        if self.failures[fmt] > _MAX_ATTEMPTS:
            raise _GiveUp(f"the output holds more than {_MAX_ATTEMPTS} {fmt} fragments")


class _GiveUp(Exception):
    """Too many fragments of one format: the input is hostile, stop scanning it."""


_DECODER = json.JSONDecoder()


def json_reason(exc: json.JSONDecodeError) -> str:
    """What :mod:`json` says is wrong, without the ``at`` that its own message puts
    before the position (``Unterminated string starting at``): each caller says where.

    >>> try:
    ...     json.loads('{"a": "b')
    ... except json.JSONDecodeError as exc:
    ...     print(json_reason(exc))
    Unterminated string starting
    """
    return exc.msg.removesuffix(" at")


def _json_where(exc: json.JSONDecodeError, start: int) -> str:
    """``"Expecting ',' delimiter at line 1 column 35"``, counted from ``start``."""
    line = exc.doc.count("\n", start, exc.pos) + 1
    line_start = exc.doc.rfind("\n", start, exc.pos)
    column = exc.pos - (line_start if line_start != -1 else start - 1)
    return f"{json_reason(exc)} at line {line} column {column}"


def _json_loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Problem(f"{json_reason(exc)} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise _Problem("it is nested too deeply") from None
    except ValueError as exc:
        raise _Problem(str(exc)) from None


_SPACE = re.compile(r"\s*")
_LINE_SPACE = re.compile(r"[ \t]*")


def _skip_space(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches


def _at_line_start(text: str, pos: int) -> bool:
    """Only blanks (or Markdown bold stars) between the line start and ``pos``."""
    line_start = text.rfind("\n", max(0, pos - 200), pos) + 1
    if line_start == 0 and pos > 200:
        return False
    return not text[line_start:pos].strip(" \t*")


def _glued(text: str, pos: int, extra: str) -> bool:
    """Whether ``pos`` continues a word (``XGET``, ``/GET``) rather than starting one."""
    return pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] in extra)


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "null"
    return type(value).__name__


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


#: the boundary of a multipart body written for the form fields a command or code sends
MULTIPART_BOUNDARY = "autofeedback-form-boundary"


def multipart_body(parts: list[tuple[str, str, str | None]]) -> str:
    r"""The ``multipart/form-data`` body of ``(name, text, file name or None)`` parts,
    separated by :data:`MULTIPART_BOUNDARY`.

    >>> multipart_body([("n", "5", None)]).split("\r\n")[1:4]
    ['Content-Disposition: form-data; name="n"', '', '5']
    """
    out = []
    for name, value, filename in parts:
        disposition = f'form-data; name="{_quoted(name)}"'
        if filename is not None:
            disposition += f'; filename="{_quoted(filename)}"'
        out.append(
            f"--{MULTIPART_BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n{value}\r\n"
        )
    return "".join(out) + f"--{MULTIPART_BOUNDARY}--\r\n"


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
