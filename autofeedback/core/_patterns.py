"""Spec ``pattern``s, matched in linear time: a spec is untrusted input, and
``"^(a+)+$"`` against ``"a" * 40 + "!"`` must not stall a scan, an audit or the sandbox.

JSON Schema patterns are ECMA-262 regular expressions. Each one is translated into the
syntax RE2 reads (``google-re2``, a linear-time engine; it knows ``\\p{L}``) with the
ECMA meaning kept where the engines differ:

* ``\\d``, ``\\w``, ``\\b`` are ASCII, ``\\s`` is Unicode white space and line terminators;
* ``.`` stops at ``\\n``, ``\\r``, U+2028 and U+2029; ``$`` matches only at the very end;
* ``\\cX``, ``\\uXXXX`` (surrogate pairs joined), ``\\u{X}``, ``\\p{Letter}`` (long names,
  ``gc=``/``sc=``), ``(?<name>...)``, ``[^]`` and ``[]``.

What RE2 cannot express (back-references, lookarounds) is matched by the ``regex``
module under a time limit (:data:`BOUNDED_TIMEOUT` a search, with the GIL released so
that a server's other threads run meanwhile): :attr:`Pattern.bounded` says so, and a
search that runs out of time decides nothing (``None``), so a value is never blamed for
the spec's expensive pattern. A check of one call spends at most
:data:`CHECK_BUDGET` seconds on such searches in all (:class:`PatternBudget`: twenty
values of 3,000 characters under a back-reference pattern took 4 s a call, and a
900 KB body 95 s); what the budget left unsearched is listed in
:attr:`PatternBudget.undecided`, so the checks can say that it was not checked.

A pattern neither engine can read is not a regular expression: :func:`compile_pattern`
raises :class:`InvalidPattern`, and the spec loaders drop that keyword with a warning.

>>> compile_pattern(r"^\\p{Letter}+$").search("école")
True
>>> compile_pattern("^(a+)+$").search("a" * 40 + "!")
False
>>> compile_pattern(r"^(\\w)\\1$").bounded
True
"""

from __future__ import annotations

import contextvars
import functools
import string
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import re2  # type: ignore[import-untyped]

# `regex` (the bounded matcher) and jsonschema (whose keywords these are) are imported
# where they are used: most specs need neither, and a clean call checks no keyword here

__all__ = [
    "BOUNDED_TIMEOUT",
    "CHECK_BUDGET",
    "KEYWORDS",
    "InvalidPattern",
    "Pattern",
    "PatternBudget",
    "compile_pattern",
    "has_bounded",
    "is_bounded",
    "is_valid",
    "matches",
]

#: Seconds one search by the bounded (backtracking) matcher may take.
BOUNDED_TIMEOUT = 0.2
#: Seconds the bounded matcher may take in all for the check of one call (see
#: :class:`PatternBudget`).
CHECK_BUDGET = 1.0
# RE2's memory bound per compiled pattern (its default; ^\p{L}{1,255}$ needs more than
# 2 MiB): a pattern past it goes to the bounded matcher. With at most 1,024 patterns
# cached, a spec of thousands of patterns cannot make the cache grow without end.
_RE2_MEMORY = 8 << 20


class InvalidPattern(ValueError):
    """A ``pattern`` that is not a regular expression (``"(("``, ``"[z-a]"``)."""


class _NeedsBacktracking(Exception):
    """The pattern uses a back-reference or a lookaround: RE2 cannot run it."""


# ECMA-262 WhiteSpace and LineTerminator code points (the meaning of \s)
_SPACE = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_LINE_END = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_MAX = 0x10FFFF

# ECMA General_Category long names (and the few aliases specs use) -> RE2's short names
_CATEGORIES = {
    "letter": "L",
    "uppercaseletter": "Lu",
    "lowercaseletter": "Ll",
    "titlecaseletter": "Lt",
    "modifierletter": "Lm",
    "otherletter": "Lo",
    "mark": "M",
    "combiningmark": "M",
    "nonspacingmark": "Mn",
    "spacingmark": "Mc",
    "enclosingmark": "Me",
    "number": "N",
    "decimalnumber": "Nd",
    "digit": "Nd",
    "letternumber": "Nl",
    "othernumber": "No",
    "punctuation": "P",
    "punct": "P",
    "connectorpunctuation": "Pc",
    "dashpunctuation": "Pd",
    "openpunctuation": "Ps",
    "closepunctuation": "Pe",
    "initialpunctuation": "Pi",
    "finalpunctuation": "Pf",
    "otherpunctuation": "Po",
    "symbol": "S",
    "mathsymbol": "Sm",
    "currencysymbol": "Sc",
    "modifiersymbol": "Sk",
    "othersymbol": "So",
    "separator": "Z",
    "spaceseparator": "Zs",
    "lineseparator": "Zl",
    "paragraphseparator": "Zp",
    "other": "C",
    "control": "Cc",
    "cntrl": "Cc",
    "format": "Cf",
    "surrogate": "Cs",
    "privateuse": "Co",
    "unassigned": "Cn",
}
_SHORT = {v.lower(): v for v in _CATEGORIES.values()}


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= _MAX:
        out.append((start, _MAX))
    return tuple(out)


_NOT_SPACE = _complement(_SPACE)
_NOT_LINE_END = _complement(_LINE_END)


class PatternBudget:
    """At most ``seconds`` of bounded-matcher searches, for the check of one call; while
    active (``with budget:``), every bounded :meth:`Pattern.search` in this thread (or
    task) takes its time from it, and one that finds it spent decides nothing. The
    patterns that decided nothing (timed out, or found the budget spent) are in
    :attr:`undecided` (the first 64, in order; :attr:`misses` counts them all), the texts
    they were searched in in :attr:`undecided_texts`, and the last such search, pattern
    and text, in :attr:`last` (however many came before it). Linear-time (RE2) searches
    are free.

    >>> budget = PatternBudget(0.0)
    >>> with budget:
    ...     compile_pattern(r"^(a)\\1$").search("aa")
    >>> budget.undecided == [r"^(a)\\1$"]
    True
    """

    def __init__(self, seconds: float = CHECK_BUDGET) -> None:
        self.left = seconds
        self.undecided: list[str] = []
        self.undecided_texts: list[str] = []
        self.last: tuple[str, str] | None = None
        self.misses = 0
        self._tokens: list[contextvars.Token[PatternBudget | None]] = []

    def __enter__(self) -> PatternBudget:
        self._tokens.append(_BUDGET.set(self))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _BUDGET.reset(self._tokens.pop())

    def _note(self, source: str, text: str) -> None:
        self.misses += 1
        self.last = (source, text)
        if len(self.undecided) < 64:
            self.undecided.append(source)
            self.undecided_texts.append(text)

    @staticmethod
    def current() -> PatternBudget | None:
        """The budget active here, if any."""
        return _BUDGET.get()


_BUDGET: contextvars.ContextVar[PatternBudget | None] = contextvars.ContextVar(
    "autofeedback_pattern_budget", default=None
)


@dataclass(frozen=True)
class Pattern:
    """A compiled spec pattern. ``bounded``: matched by the time-limited backtracking
    engine (RE2 cannot express it), so :meth:`search` may answer ``None``."""

    source: str
    bounded: bool
    _compiled: Any

    def search(self, text: str) -> bool | None:
        """Whether the pattern matches somewhere in ``text``; ``None`` when the bounded
        matcher ran out of time (nothing decided).

        >>> compile_pattern("^[a-z]+$").search("abc")
        True
        """
        if self.bounded:
            return self._bounded_search(text)
        # bytes: a lone surrogate (valid in a Python str, not in UTF-8) must not raise
        data = text.encode("utf-8", "surrogatepass")
        return self._compiled.search(data) is not None

    def _bounded_search(self, text: str) -> bool | None:
        budget = _BUDGET.get()
        timeout = BOUNDED_TIMEOUT if budget is None else min(BOUNDED_TIMEOUT, budget.left)
        if timeout <= 0:
            assert budget is not None
            budget._note(self.source, text)
            return None
        started = time.perf_counter()
        try:
            # concurrent: the GIL is released while it backtracks (str is immutable)
            found = self._compiled.search(text, timeout=timeout, concurrent=True)
        except TimeoutError:
            found = ...
        if budget is not None:
            budget.left -= time.perf_counter() - started
        if found is ...:
            if budget is not None:
                budget._note(self.source, text)
            return None
        return found is not None


def is_valid(source: str) -> bool:
    """Whether ``source`` is a regular expression a spec may use.

    >>> is_valid("^a+$"), is_valid("((")
    (True, False)
    """
    return not isinstance(_compile(source), str)


def is_bounded(source: Any) -> bool:
    """Whether ``source`` runs on the time-limited backtracking matcher (RE2 cannot).

    >>> is_bounded(r"^(a)\\1$"), is_bounded("^a+$")
    (True, False)
    """
    compiled = _compile(source) if isinstance(source, str) else None
    return isinstance(compiled, Pattern) and compiled.bounded


def has_bounded(schema: Any) -> bool:
    """Whether ``schema`` (walked to any depth, examples and enums skipped) holds a
    ``pattern`` or ``patternProperties`` key that needs the bounded matcher: a server
    then checks calls against it off its event loop.

    >>> has_bounded({"properties": {"a": {"pattern": r"^(\\w)\\1$"}}})
    True
    >>> has_bounded({"properties": {"a": {"pattern": "^a+$"}}})
    False
    """
    stack: list[Any] = [schema]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))  # $refs are expanded into shared objects: each walked once
        for key, value in node.items():
            if key == "pattern" and is_bounded(value):
                return True
            keyed = key == "patternProperties" and isinstance(value, dict)
            if keyed and any(is_bounded(k) for k in value):
                return True
            if key not in _DATA_KEYS:
                stack.append(value)
    return False


# values, not schemas: a {"pattern": ...} inside an example is data
_DATA_KEYS = frozenset({"enum", "const", "example", "examples", "default"})


def compile_pattern(source: str) -> Pattern:
    """The linear-time (or else bounded) matcher for an ECMA-262 ``pattern``.

    Raises :class:`InvalidPattern` when ``source`` is not a regular expression.

    >>> compile_pattern(r"^\\d{3}$").search("١٢٣")  # ECMA's \\d is ASCII
    False
    """
    compiled = _compile(source)
    if isinstance(compiled, str):
        raise InvalidPattern(compiled)
    return compiled


@functools.lru_cache(maxsize=1024)
def _compile(source: str) -> Pattern | str:
    """The compiled pattern, or why it is not one (cached either way)."""
    if not isinstance(source, str):
        return f"a pattern must be a string, not {type(source).__name__}"
    try:
        translated = _translate(source, _re2_char)
    except _NeedsBacktracking:
        pass
    except InvalidPattern as exc:
        return str(exc)
    else:
        try:
            options = re2.Options()
            options.log_errors = False
            options.max_mem = _RE2_MEMORY
            return Pattern(source, False, re2.compile(translated, options))
        except re2.error:
            pass  # too large for RE2's memory bound, or a syntax RE2 refuses
    import regex  # type: ignore[import-untyped]

    try:
        translated = _translate(source, _regex_char, backtracking=True)
        return Pattern(source, True, regex.compile(translated, regex.ASCII | regex.V0))
    except (InvalidPattern, regex.error, ValueError, OverflowError, RecursionError) as exc:
        return f"not a valid regular expression: {exc}"


# -- translation -----------------------------------------------------------------------


def _re2_char(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _regex_char(code: int) -> str:
    return f"\\U{code:08X}"


def _ranges(ranges: tuple[tuple[int, int], ...], char: Callable[[int], str]) -> str:
    return "".join(char(lo) if lo == hi else f"{char(lo)}-{char(hi)}" for lo, hi in ranges)


_ESCAPED_CHARS = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D, "0": 0x00}


class _Reader:
    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    def more(self) -> bool:
        return self.i < len(self.s)

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def take(self, n: int = 1) -> str:
        out = self.s[self.i : self.i + n]
        self.i += n
        return out


def _hex(reader: _Reader, n: int) -> int | None:
    digits = reader.peek(n)
    if len(digits) == n and all(c in "0123456789abcdefABCDEF" for c in digits):
        reader.take(n)
        return int(digits, 16)
    return None


def _property(reader: _Reader, negated: bool, backtracking: bool) -> str:
    """``\\p{...}`` / ``\\P{...}`` (the ``p``/``P`` already read)."""
    if reader.peek() != "{" or "}" not in reader.s[reader.i :]:
        raise InvalidPattern("\\p must be followed by {Property}")
    end = reader.s.index("}", reader.i)
    body = reader.s[reader.i + 1 : end]
    reader.i = end + 1
    key, _, value = body.partition("=")
    if not value:
        key, value = "", key
    norm = value.replace("_", "").replace(" ", "").replace("-", "").lower()
    if key.lower() in ("", "gc", "generalcategory", "general_category"):
        name = _CATEGORIES.get(norm) or _SHORT.get(norm)
        if name is None and key:
            raise InvalidPattern(f"unknown general category {value!r}")
        if name is None:
            if norm in ("any", "ascii", "assigned"):
                name = {"any": "Any", "ascii": "ASCII", "assigned": "Assigned"}[norm]
                if name in ("ASCII", "Assigned") and not backtracking:
                    raise _NeedsBacktracking  # RE2 lacks them; regex has them
            else:
                name = value.strip()  # a script name: RE2 knows the long names
    elif key.lower() in ("sc", "script", "scx", "scriptextensions", "script_extensions"):
        name = value.strip()
    else:
        raise InvalidPattern(f"unsupported Unicode property {body!r}")
    if not name.replace("_", "").isalnum():
        raise InvalidPattern(f"unknown Unicode property {body!r}")
    return f"\\{'P' if negated else 'p'}{{{name}}}"


def _escape(reader: _Reader, char: Callable[[int], str], in_class: bool, backtracking: bool) -> str:
    """One escape (the backslash already read), as the target engine spells it."""
    if not reader.more():
        raise InvalidPattern("the pattern ends with a lone backslash")
    c = reader.take()
    if c == "d":
        return "0-9" if in_class else "[0-9]"
    if c == "D":
        return "\\D"  # RE2's and regex's (ASCII) \D: everything but 0-9, as in ECMA
    if c == "w":
        return "0-9A-Za-z_" if in_class else "[0-9A-Za-z_]"
    if c == "W":
        return "\\W"
    if c == "s":
        body = _ranges(_SPACE, char)
        return body if in_class else f"[{body}]"
    if c == "S":
        body = _ranges(_NOT_SPACE, char)
        return body if in_class else f"[{body}]"
    if c in "bB":
        if in_class:
            if c == "B":
                raise InvalidPattern("\\B inside a character class")
            return char(0x08)
        return "\\" + c
    if c in "pP":
        return _property(reader, c == "P", backtracking)
    if c in _ESCAPED_CHARS and not (c == "0" and reader.peek().isdigit()):
        return char(_ESCAPED_CHARS[c])
    if c == "c":
        letter = reader.peek()
        if letter.isascii() and letter.isalpha():
            reader.take()
            return char(ord(letter) % 32)
        return "\\\\" + "c"  # Annex B: a literal backslash and c
    if c == "x":
        code = _hex(reader, 2)
        return char(code) if code is not None else "x"
    if c == "u":
        return char(_unicode_escape(reader))
    if c.isdigit() or (c == "k" and reader.peek() == "<"):
        if in_class:
            return char(int(c, 8)) if c in "01234567" else c
        if not backtracking:
            raise _NeedsBacktracking
        if c == "k":
            end = reader.s.find(">", reader.i)
            if end < 0:
                raise InvalidPattern("\\k< without a closing >")
            name = reader.s[reader.i + 1 : end]
            reader.i = end + 1
            return f"(?P={name})"
        digits = c
        while reader.peek().isdigit():
            digits += reader.take()
        return f"(?:\\{digits})"
    if c in string.punctuation:
        return "\\" + c
    return char(ord(c))  # an identity escape (\z in Annex B is "z")


def _unicode_escape(reader: _Reader) -> int:
    if reader.peek() == "{":
        end = reader.s.find("}", reader.i)
        digits = reader.s[reader.i + 1 : end] if end > 0 else ""
        if not digits or len(digits) > 6 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise InvalidPattern("\\u{...} needs 1 to 6 hex digits")
        reader.i = end + 1
        code = int(digits, 16)
        if code > _MAX:
            raise InvalidPattern("\\u{...} beyond U+10FFFF")
        return code
    short = _hex(reader, 4)
    if short is None:
        return ord("u")  # Annex B identity escape
    code = short
    if 0xD800 <= code <= 0xDBFF and reader.peek(2) == "\\u":
        save = reader.i
        reader.take(2)
        low = _hex(reader, 4)
        if low is not None and 0xDC00 <= low <= 0xDFFF:
            return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        reader.i = save
    return code


def _translate(source: str, char: Callable[[int], str], *, backtracking: bool = False) -> str:
    reader = _Reader(source)
    out: list[str] = []
    depth = 0
    while reader.more():
        c = reader.take()
        if c == "\\":
            out.append(_escape(reader, char, False, backtracking))
        elif c == ".":
            out.append(f"[{_ranges(_NOT_LINE_END, char)}]")
        elif c == "$":
            out.append("$" if char is _re2_char else "\\Z")
        elif c == "[":
            out.append(_class(reader, char, backtracking))
        elif c == "(":
            depth += 1
            if reader.peek() == "?":
                head = reader.peek(4)
                if head.startswith(("?=", "?!", "?<=", "?<!")):
                    if not backtracking:
                        raise _NeedsBacktracking
                    out.append("(" + reader.take(3 if head.startswith("?<") else 2))
                elif head.startswith("?<"):
                    end = reader.s.find(">", reader.i)
                    name = reader.s[reader.i + 2 : end] if end > 0 else ""
                    if not name.isidentifier():
                        raise InvalidPattern(f"bad group name at position {reader.i}")
                    reader.i = end + 1
                    out.append(f"(?P<{name}>")
                elif head.startswith("?:"):
                    reader.take(2)
                    out.append("(?:")
                else:
                    raise InvalidPattern(f"unsupported group syntax at {reader.i}: (?{head[1:]}")
            else:
                out.append("(")
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise InvalidPattern(f"unbalanced ')' at position {reader.i - 1}")
            out.append(")")
        elif c == "{":
            out.append(_brace(reader, backtracking))
        elif c == "}":
            out.append("\\}")
        elif c in "^*+?|":
            out.append(c)
        elif c in string.punctuation and c != "_":
            out.append("\\" + c)
        else:
            out.append(c if c.isascii() else char(ord(c)))
    if depth:
        raise InvalidPattern("unbalanced '('")
    return "".join(out)


def _brace(reader: _Reader, backtracking: bool) -> str:
    """``{n}``, ``{n,}``, ``{n,m}`` are quantifiers; any other ``{`` is a literal."""
    end = reader.s.find("}", reader.i)
    body = reader.s[reader.i : end] if end >= 0 else ""
    low, _, high = body.partition(",")
    if end >= 0 and low.isdigit() and (not high or high.isdigit()):
        if high and int(high) < int(low):
            raise InvalidPattern(f"numbers out of order in {{{body}}}")
        if not backtracking and (int(low) > 1000 or (high and int(high) > 1000)):
            raise _NeedsBacktracking  # beyond RE2's repeat limit
        reader.i = end + 1
        return "{" + body + "}"
    return "\\{"


def _class(reader: _Reader, char: Callable[[int], str], backtracking: bool) -> str:
    """A character class (the ``[`` already read)."""
    negated = reader.peek() == "^"
    if negated:
        reader.take()
    parts: list[str] = []
    while True:
        if not reader.more():
            raise InvalidPattern("unterminated character class")
        c = reader.take()
        if c == "]":
            break
        if c == "\\":
            parts.append(_escape(reader, char, True, backtracking))
        elif c in "[]^\\":
            parts.append("\\" + c)
        elif c == "-":
            parts.append("-" if parts and reader.peek() != "]" else "\\-")
        else:
            parts.append(c if c.isascii() else char(ord(c)))
    if not parts:
        # ECMA: [] matches nothing, [^] any character
        return f"[{char(0)}-{char(_MAX)}]" if negated else f"[^{char(0)}-{char(_MAX)}]"
    return f"[{'^' if negated else ''}{''.join(parts)}]"


# -- JSON Schema keywords ----------------------------------------------------------------


def matches(source: Any, text: str) -> bool | None:
    """Whether the spec pattern ``source`` matches ``text``: ``None`` when nothing can be
    decided (the pattern is not a regular expression, or the bounded matcher ran out of
    time), so the value is not blamed.

    >>> matches("^[0-9]+$", "12"), matches("((", "12")
    (True, None)
    """
    compiled = _compile(source) if isinstance(source, str) else None
    if compiled is None or isinstance(compiled, str):
        return None
    return compiled.search(text)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and matches(pattern, instance) is False:
        compiled = _compile(pattern)
        note = " (checked with a bounded matcher)" if getattr(compiled, "bounded", 0) else ""
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}{note}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if isinstance(key, str) and matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _covered(key: Any, patterns: Any) -> bool:
    """Whether a ``patternProperties`` pattern takes ``key`` (a search that decides
    nothing counts as a match: the value is not blamed; an invalid pattern takes nothing)."""
    if not isinstance(key, str) or not isinstance(patterns, dict):
        return False
    for source in patterns:
        compiled = _compile(source) if isinstance(source, str) else None
        if isinstance(compiled, Pattern) and compiled.search(key) is not False:
            return True
    return False


def _additional(instance: Any, schema: Any) -> list[Any]:
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [k for k in instance if k not in properties and not _covered(k, patterns)]


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        from jsonschema.exceptions import ValidationError

        listed = ", ".join(repr(e) for e in sorted(extras, key=str))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _evaluated(validator: Any, instance: Any, schema: Any, depth: int = 0) -> set[Any]:
    """The keys of ``instance`` that ``schema`` evaluates (what ``unevaluatedProperties``
    does not see), after jsonschema's ``find_evaluated_property_keys_by_schema`` with
    ``patternProperties`` on the engines above. Schemas here are loaded ones, their
    ``$ref``s already expanded."""
    if not isinstance(schema, dict) or depth > 32:
        return set()
    keys: set[Any] = set()
    properties = schema.get("properties")
    if isinstance(properties, dict):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            keys |= {k for k, v in instance.items() if validator.evolve(schema=sub).is_valid(v)}
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        keys |= {k for k in instance if _covered(k, patterns)}
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, dict):
        for name, sub in dependent.items():
            if name in instance:
                keys |= _evaluated(validator, instance, sub, depth + 1)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword) or []:
            if validator.evolve(schema=sub).is_valid(instance):
                keys |= _evaluated(validator, instance, sub, depth + 1)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated(validator, instance, schema["if"], depth + 1)
            keys |= _evaluated(validator, instance, schema.get("then"), depth + 1)
        else:
            keys |= _evaluated(validator, instance, schema.get("else"), depth + 1)
    return keys


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated(validator, instance, schema)
    bad = [
        key
        for key in instance
        if key not in evaluated and not validator.evolve(schema=unevaluated).is_valid(instance[key])
    ]
    if bad:
        from jsonschema.exceptions import ValidationError

        listed = ", ".join(repr(k) for k in sorted(bad, key=str))
        if unevaluated is False:
            yield ValidationError(f"Unevaluated properties are not allowed ({listed} unexpected)")
        else:
            yield ValidationError(
                f"Unevaluated properties are not valid under the given schema ({listed})"
            )


#: ``pattern``, ``patternProperties``, ``additionalProperties`` and
#: ``unevaluatedProperties`` on the engines above, for ``jsonschema.validators.extend``:
#: jsonschema's own use Python's backtracking ``re``.
KEYWORDS: dict[str, Any] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
}
