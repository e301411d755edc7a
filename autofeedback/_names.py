"""Name comparison shared by the API-name (E2) and parameter-name (E3) checks."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Protocol

__all__ = ["NameMatcher", "closest_literal", "closest_spelling", "literal_key"]

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def literal_key(name: str) -> str:
    """``userLogin``, ``user_login`` and ``User-Login`` all give ``userlogin`` (the paper's
    literal variants: same after lower-casing and dropping non-alphanumerics)."""
    return _NON_ALNUM.sub("", name.lower())


def closest_literal(name: str, candidates: Sequence[str]) -> str | None:
    """The candidate that ``name`` is a literal variant of, if any."""
    key = literal_key(name)
    if not key:
        return None
    for c in candidates:
        if c != name and literal_key(c) == key:
            return c
    return None


def closest_spelling(name: str, candidates: Sequence[str], cutoff: float = 0.6) -> str | None:
    """The closest candidate by edit similarity: a suggestion when nothing else fits."""
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=cutoff)
    return matches[0] if matches else None


class Scored(Protocol):
    """A name with a similarity score (``retriever.Ranked`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def score(self) -> float: ...


class NameMatcher(Protocol):
    """Semantic similarity of identifiers (``retriever.ApiRetriever`` is one)."""

    def name_similarity(self, name: str, candidates: Sequence[str]) -> Sequence[Scored]: ...
