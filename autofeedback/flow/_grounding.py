"""Where a literal value may come from: E5.3's notion of *grounded* and *placeholder*.

A value needs grounding only when it is identifier-, key- or credential-like, judged
from the parameter (its name, its format) rather than from the value alone, so search
queries, names and counts from the instruction are never questioned. Placeholders a model
writes when it does not know a value (``your_token_here``, ``<tv_id>``, ``xxx``) are
reported wherever they appear, unless the user wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from autofeedback.core._model import Parameter

__all__ = ["grounded", "is_id_like", "placeholder_kind", "response_values"]

# names of parameters whose values are identifiers, keys or credentials: `movie_id`,
# `ids`, `playlistId`, `token`, `api_key`, `appid`, `context_uri`, `session`, `cursor`
_ID_NAME = re.compile(
    r"(?:^|[_\-.])(?:ids?|uuid|guid|keys?|token|secret|password|passwd|uris?|urn|cursor|"
    r"session(?:_id)?|sid|hash|appid|apikey|auth|authorization|credential)$"
    r"|[a-z0-9](?:Id|Ids|ID|IDs|Key|Token|Uri|URI|Uuid|UUID|Secret)$"
    r"|^(?:ids?|appid|apikey|token|key|secret|password|auth|authorization|uri|uris)$",
)
_ID_FORMATS = frozenset({"uuid", "uri", "uri-reference", "iri", "password", "byte"})

# written by a model that does not know the value, whatever the parameter
_STRONG = re.compile(
    r"^(?:<[^<>]{1,60}>|\{\{?\s*[\w.\- ]{1,60}\s*\}?\}|\[[A-Z][A-Z0-9_ ]{1,60}\]"
    r"|your(?:[_\-]?[\w\-]{0,60})?|[\w\-]{0,60}_here|x{3,}|X{3,}|\*{3,}|\.{3}|…"
    r"|(?:insert|enter|replace|put)[_\- ][\w\- ]{1,60}|placeholder|todo|tbd)$",
    re.IGNORECASE,
)
# "your ..." written as words: a stand-in where it names the slot ("your api id", "your
# search query"), or wherever an identifier goes; elsewhere it may be the value itself (a
# playlist named "Your First Private Playlist", a description "your favourite songs")
_YOUR_WORDS = re.compile(r"^your\s+[\w\- ]{1,60}$", re.IGNORECASE)
_SLOT = re.compile(
    r"\b(?:ids?|names?|keys?|tokens?|query|queries|terms?|keywords?|values?|texts?|here|"
    r"titles?|descriptions?|emails?|address|numbers?|codes?|urls?|uris?|username|password|"
    r"handle|input)$",
    re.IGNORECASE,
)
# upper-case names standing for a value: YOUR_API_KEY, TV_ID, ACCESS_TOKEN
_STRONG_UPPER = re.compile(
    r"^(?:YOUR|MY)_[A-Z0-9_]+$|^[A-Z][A-Z0-9]*_(?:API_)?(?:KEY|TOKEN|SECRET|ID|PASSWORD)$"
)
# placeholders only where an identifier or credential is expected (`string` may be a
# real search query; as a `token` it is the schema's type name copied)
_WEAK = re.compile(
    r"^(?:string|str|integer|int|number|id|example|sample|dummy|test|fake|none|null|nil|"
    r"undefined|n/?a|abc|abc123|123|1234|12345|123456|1234567890|0+|token|key|api_?key|"
    r"access_?token|secret|password|uuid|(?:example|sample|dummy|test|fake|my)[_\-]\w+)$",
    re.IGNORECASE,
)


def is_id_like(param: Parameter) -> bool:
    """Whether ``param`` carries an identifier, key or credential (by name and format).

    >>> is_id_like(Parameter("movie_id", "path")), is_id_like(Parameter("query", "query"))
    (True, False)
    """
    fmt = param.schema.get("format") if isinstance(param.schema, Mapping) else None
    return bool(_ID_NAME.search(param.name)) or fmt in _ID_FORMATS


def placeholder_kind(value: Any, *, id_like: bool) -> str | None:
    """``"placeholder"`` when ``value`` is a stand-in rather than a value (``<tv_id>``),
    ``"weak"`` when it is one only where an identifier goes (``string``, ``12345``: a
    model's stand-in, or a test account's real value), else ``None``.

    >>> placeholder_kind("your_token_here", id_like=False)
    'placeholder'
    >>> placeholder_kind("string", id_like=False), placeholder_kind("string", id_like=True)
    (None, 'weak')
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return "weak" if id_like else None
    if _STRONG.match(text) or _STRONG_UPPER.match(text):
        return "placeholder"
    if _YOUR_WORDS.match(text) and (id_like or _SLOT.search(text)):
        return "placeholder"
    if id_like and _WEAK.match(text):
        return "weak"  # `12345`, `password`: a stand-in, or a test account's real value
    return None


def response_values(body: Any, *, limit: int = 20000) -> Iterator[str]:
    """Every scalar in a response body as text (the values a later step may reuse)."""
    stack = [body]
    seen = 0
    while stack and seen < limit:
        item = stack.pop()
        seen += 1
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, (str, int, float)):
            yield str(item)


def _documented(param: Parameter) -> set[str]:
    schema = param.schema if isinstance(param.schema, Mapping) else {}
    out: set[str] = set()
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list):
            out.update(str(v) for v in values)
    for key in ("default", "example", "const"):
        if key in schema and schema[key] is not None:
            out.add(str(schema[key]))
    return out


def grounded(
    value: Any,
    param: Parameter,
    texts: Iterable[str],
    seen: set[str],
    *,
    documented: bool = True,
) -> bool:
    """Whether ``value`` comes from the user (``texts``), an earlier response (``seen``)
    or, with ``documented``, the documentation of ``param`` (enum, default, example). A
    comma-separated list is grounded when each of its items is.

    >>> grounded("550", Parameter("movie_id", "path"), ["details of movie 550"], set())
    True
    """
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, (list, tuple)):
        return all(grounded(v, param, texts, seen, documented=documented) for v in value)
    if not isinstance(value, (str, int, float)):
        return True  # objects are judged field by field elsewhere, not as one id
    text = str(value).strip()
    if not text:
        return False
    docs = _documented(param) if documented else set()
    haystacks = [t.lower() for t in texts if t]

    def one(item: str) -> bool:
        item = item.strip()
        if not item or item in seen or item in docs:
            return True
        low = item.lower()
        if any(low in h for h in haystacks):
            return True
        # a Spotify URI built from an id the trace returned: spotify:track:<id>
        tail = item.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
        return (
            tail != item
            and bool(tail)
            and (tail in seen or any(tail.lower() in h for h in haystacks))
        )

    if one(text):
        return True
    if "," in text:
        return all(one(part) for part in text.split(","))
    return False
