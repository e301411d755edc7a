"""Exact matching of code-like tokens, the part of retrieval that embeddings do badly.

A sentence embedding hardly tells ``info_code 20000`` from ``info_code 30000``, yet a terse
server error often carries nothing but such a code. Tokens that contain a digit or an
underscore (``429``, ``20000``, ``info_code``, ``RATE_LIMITED``) are therefore matched
exactly, and a chunk that shares them with the query gets a bonus on top of its cosine
similarity. Tokens are weighted by inverse document frequency, so that a rare code
(``20000``) counts for more than a field name every error shares (``info_code``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["LEXICAL_WEIGHT", "code_tokens", "idf_weights", "lexical_bonus"]

#: The bonus for a chunk containing every code token of the query. Large enough that an
#: exact code match outranks a merely similar-sounding explanation (cosine differences
#: between error chunks are typically 0.05-0.2), small enough that a chunk which only
#: shares a status code with the query cannot beat a clearly better semantic match.
LEXICAL_WEIGHT = 0.3

_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*")


def code_tokens(text: str) -> frozenset[str]:
    """The code-like tokens of ``text``, lower-cased.

    >>> sorted(code_tokens('400: {"info_code": 20000, "error": "bad date"}'))
    ['20000', '400', 'info_code']
    """
    return frozenset(
        tok
        for tok in (m.group(0).lower() for m in _TOKEN.finditer(text))
        if len(tok) >= 3 and (any(c.isdigit() for c in tok) or "_" in tok)
    )


def idf_weights(documents: Sequence[Iterable[str]]) -> dict[str, float]:
    """``ln(1 + N / df)`` for every token of the tokenised ``documents``.

    >>> {t: round(w, 2) for t, w in sorted(idf_weights([{"429"}, {"429", "20000"}]).items())}
    {'20000': 1.1, '429': 0.69}
    """
    df: dict[str, int] = {}
    for tokens in documents:
        for token in set(tokens):
            df[token] = df.get(token, 0) + 1
    n = len(documents)
    return {token: math.log(1 + n / count) for token, count in df.items()}


def lexical_bonus(
    query_tokens: Iterable[str], chunk_tokens: Iterable[str], idf: Mapping[str, float]
) -> float:
    """``LEXICAL_WEIGHT`` times the IDF-weighted share of the query's code tokens that the
    chunk contains. Tokens no chunk contains (a request id) are left out of the share:
    they cannot tell chunks apart.

    >>> lexical_bonus({"400", "20000", "req_8f3a"}, {"400"}, {"400": 1.0, "20000": 1.0})
    0.15
    """
    known = [t for t in query_tokens if t in idf]
    total = sum(idf[t] for t in known)
    if total <= 0:
        return 0.0
    have = set(chunk_tokens)
    shared = sum(idf[t] for t in known if t in have)
    return LEXICAL_WEIGHT * shared / total
