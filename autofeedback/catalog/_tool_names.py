"""Tool names that cannot be told apart by eye, and names of two different tools: set
aside, never matched to a call.

A tools list may hold ``reаd_file`` (its ``а`` Cyrillic), ``read\\u200bfile`` (a zero-width
space) or ``ｒｅａｄ_file`` (full-width letters) beside, or instead of, ``read_file``; or two
tools of one name, of which the server runs one. A call matched to such a name by its
spelling runs a tool the model did not name, or one it cannot tell from another. So
these names are never a repair's target nor a suggestion, and a call that names one
exactly is answered with a finding, never forwarded.

What makes a name one (Unicode's identifier-security rules, UTS #39, read with the
standard library's :mod:`unicodedata`: the Script property it lacks is read from each
letter's character name, whose first word is its script for the letters names are made
of; a confusables table is not needed to refuse a name, only to say which one it
imitates):

* an invisible or formatting character (category ``Cf``, ``Cc``, ``Co``, ``Cn``, a space
  other than U+0020, a variation selector, the Hangul fillers);
* a character that Unicode compatibility normalisation (NFKC) changes (full-width and
  mathematical letters, ligatures, the Kelvin and Ohm signs...);
* letters of two scripts, other than the mixes of Latin with Chinese, Japanese or Korean
  that UTS #39 allows ("highly restrictive").

>>> name_problem("read_file") is None
True
>>> name_problem("re\\u0430d_file")
"mixes Latin and Cyrillic letters ('re\\\\u0430d_file')"
>>> set_aside(["read_file", "get_weather", "get_weather"])
{'get_weather': 'is listed 2 times, as different tools'}
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

__all__ = ["looks_alike", "name_problem", "set_aside"]

#: invisible letters and symbols that are not in the format categories
_INVISIBLE = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f"})
#: the scripts UTS #39 lets Latin mix with in one identifier ("highly restrictive")
_ALLOWED_MIXES = (
    frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA"}),
    frozenset({"LATIN", "CJK", "BOPOMOFO"}),
    frozenset({"LATIN", "CJK", "HANGUL"}),
)
_SCRIPT_SHOWN = {"CJK": "Han", "KATAKANA-HIRAGANA": "Katakana"}


def _invisible(ch: str) -> bool:
    category = unicodedata.category(ch)
    if category in ("Cf", "Cc", "Co", "Cn", "Zl", "Zp"):
        return True
    if category == "Zs" and ch != " ":
        return True
    return ch in _INVISIBLE or "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def _script(ch: str) -> str | None:
    """The script of a letter, from its character name (``CYRILLIC SMALL LETTER A``);
    ``None`` for what is no letter (digits, ``_``, marks: common to every script)."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def _character(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}"


def _latin_first(script: str) -> tuple[bool, str]:
    return script != "Latin", script


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be told from another name by eye (an invisible character,
    one NFKC changes, letters of two scripts), as the end of a sentence; ``None`` when
    nothing does.

    >>> name_problem("read\\u200bfile")
    "holds an invisible character (U+200B ZERO WIDTH SPACE: 'read\\\\u200bfile')"
    >>> name_problem("\\uff52ead_file")
    "changes under Unicode compatibility normalisation ('\\\\uff52ead_file' reads as 'read_file')"
    >>> name_problem("天気_forecast") is None    # Latin with Chinese: allowed
    True
    """
    if name.isascii() and name.isprintable():
        # printable ASCII: no invisible character (the space is U+0020), nothing NFKC
        # changes, letters of one script: the names of nearly every tools list
        return None
    hidden = next((ch for ch in name if _invisible(ch)), None)
    if hidden is not None:
        return f"holds an invisible character ({_character(hidden)}: {name!a})"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return f"changes under Unicode compatibility normalisation ({name!a} reads as {normal!r})"
    scripts = {s for s in map(_script, name) if s is not None}
    if len(scripts) > 1 and not any(scripts <= allowed for allowed in _ALLOWED_MIXES):
        shown = sorted((_SCRIPT_SHOWN.get(s, s.title()) for s in scripts), key=_latin_first)
        return f"mixes {', '.join(shown[:-1])} and {shown[-1]} letters ({name!a})"
    return None


def set_aside(names: Iterable[str]) -> dict[str, str]:
    """The names of one tools list that are never matched to a call, each with why: the
    confusable ones (:func:`name_problem`) and those listed more than once (give one
    name per distinct definition: a tool listed twice as itself is one tool).

    >>> [(ascii(k), v) for k, v in set_aside(["read_file", "re\\u0430d_file"]).items()]
    [("'re\\\\u0430d_file'", "mixes Latin and Cyrillic letters ('re\\\\u0430d_file')")]
    """
    listed = list(names)
    counts = Counter(listed)
    out: dict[str, str] = {}
    for name in dict.fromkeys(listed):
        problem = name_problem(name)
        if problem is not None:
            out[name] = problem
        elif counts[name] > 1:
            out[name] = f"is listed {counts[name]} times, as different tools"
    return out


def _skeleton(name: str) -> str:
    """``name`` as far as the eye reads it: NFKC, invisible characters dropped, lower
    case, letters of other scripts dropped (no confusables table: a hint, not a rule)."""
    text = unicodedata.normalize("NFKC", name)
    return "".join(ch for ch in text.lower() if ch.isascii() and not _invisible(ch))


def looks_alike(name: str, other: str) -> bool:
    """Whether ``other`` reads as ``name``, or one letter off it (for the hint that
    names a set-aside look-alike of a called name).

    >>> looks_alike("read_file", "re\\u0430d_file"), looks_alike("read_file", "write_file")
    (True, False)
    """
    a, b = _skeleton(name), _skeleton(other)
    if a == b:
        return True
    if abs(len(a) - len(b)) != 1:
        return False
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))
