"""E2: is the API the request names a real one, and the one the instruction asks for?

Order, as in the paper: a real API not fitting the instruction (E2.1), a literal
variant (E2.2), a semantic variant (E2.3), anything else (E2). An unknown name stops
the scan (parameter checks against a guessed API would only add noise), except where it
is one documented API's name in other words: another case or other separators, or one
slip of the keyboard (:attr:`NameCheck.likely`). The call's arguments are then checked
against that API in the same round, so the model hears of every mistake at once.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._tool_names import looks_alike
from autofeedback.checks._check_params import MAX_LISTED
from autofeedback.checks._names import (
    NameMatcher,
    Scored,
    closest_literal,
    closest_spelling,
    literal_key,
    one_typo,
)
from autofeedback.checks._words import slip, words
from autofeedback.core._findings import Finding, Severity
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._origins import without_default_port

__all__ = [
    "ApiRanker",
    "NameCheck",
    "check_name",
    "check_selection",
    "destructive",
    "name_with_values",
    "taking",
]

#: What an E2.1 margin must reach to be shown at all, and to be an error. Measured in
#: benchmarks/detection.py (RESULTS.md, "Detection"): below 0.05 a shown E2.1 is wrong
#: more often than right (precision 0.45 and 0.39 in the bins below 0.02 and 0.05), from
#: 0.05 on it pays (0.66 and up); at 0.25 it is right 88% of the time.
WARN_MARGIN = 0.05
CONFIDENT_MARGIN = 0.25

_DESTRUCTIVE = frozenset(
    {"delete", "remove", "destroy", "drop", "purge", "erase", "cancel", "revoke"}
)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


class ApiRanker(Protocol):
    """Ranks a catalog's APIs for an instruction (``retriever.ApiRetriever`` is one)."""

    def rank(
        self, instruction: str, catalog: ApiCatalog, k: int | None = None
    ) -> Sequence[Scored]: ...


@dataclass(frozen=True)
class NameCheck:
    """The operation a request resolved to (``None`` when the name is wrong)."""

    operation: Operation | None
    path_params: dict[str, str] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    #: with a wrong name: the one operation it names in other words (a literal variant,
    #: a keyboard slip), whose parameters the call's arguments are checked against
    likely: Operation | None = None


def _describe(op: Operation) -> str:
    text = " ".join(op.description.split())
    return text if len(text) <= 200 else text[:197] + "..."


def check_name(
    request: ApiRequest,
    catalog: ApiCatalog,
    *,
    matcher: NameMatcher | None = None,
    threshold: float = 0.5,
) -> NameCheck:
    """Resolve the request's API; on failure return the E2 finding that explains why."""
    if request.is_http:
        return _check_http(request, catalog, matcher=matcher, threshold=threshold)
    name = request.name or ""
    op = catalog.get(name)
    if op is not None:
        return NameCheck(op)
    names = list(catalog.names)
    where = ("api",)
    if name in catalog.set_aside:
        # a name that looks like another, or one listed twice: never called, never
        # matched to another name (issue 43)
        return _fail(
            Finding(
                "E2",
                where,
                name,
                message=f"API {name!a} is not called: its name {catalog.set_aside[name]}, "
                + (
                    "and which of those tools would run cannot be told"
                    if catalog.set_aside[name].startswith("is listed")
                    else "so it can pass for another name"
                )
                + "; tell the user instead of calling it",
            )
        )
    literal = closest_literal(name, names)
    if literal is not None:
        return _fail(
            Finding(
                "E2.2",
                where,
                name,
                expected=literal,
                suggestion=literal,
                message=f"API {name!r} does not exist; it is a spelling variant of {literal!r}",
                doc=_describe(catalog.get(literal) or Operation(literal)),
            ),
            likely=catalog.get(literal),
        )
    filled = name_with_values(name, catalog)
    if filled is not None:
        real, values = filled
        shown = ", ".join(f"{k}={v!r}" for k, v in values.items())
        return _fail(
            Finding(
                "E2.2",
                where,
                name,
                expected=real.name,
                suggestion=real.name,
                message=f"API {name!r} does not exist; it is {real.name!r} with "
                f"{' and '.join(values)} written into the name: call {real.name}({shown})",
                doc=_describe(real),
            )
        )
    # the APIs that take the call's arguments are the ones it may mean: a name is
    # compared with those first (and then only a few names are embedded, not 20,000)
    fitting = taking(request.arguments, catalog)
    pool = fitting or names
    semantic = _semantic(name, pool, matcher, threshold)
    if semantic is not None:
        best, score = semantic
        taken = " that takes these arguments" if fitting else ""
        return _fail(
            Finding(
                "E2.3",
                where,
                name,
                expected=best,
                suggestion=best,
                message=f"API {name!r} does not exist; the closest real API{taken} is "
                f"{best!r} (similarity {score:.2f})",
                doc=_describe(catalog.get(best) or Operation(best)),
            ),
            likely=_slipped(name, best, catalog),
        )
    guess = (
        one_typo(name, names)
        or (_by_words(name, fitting) if fitting else None)
        or closest_spelling(name, names)
    )
    listed = names[:MAX_LISTED]
    more = len(names) - len(listed)
    shown = ", ".join(listed) + (f" and {more} more" if more else "") or "none"
    hint = f"did you mean {guess!r}? " if guess else ""
    message = f"API {name!r} does not exist; {hint}documented APIs: {shown}"
    alike = [n for n in catalog.set_aside if looks_alike(name, n)]
    if alike:
        message += (
            f" ({alike[0]!a} is listed too, but never called: its name "
            f"{catalog.set_aside[alike[0]]})"
        )
    return _fail(
        Finding(
            "E2",
            where,
            name,
            expected=listed,
            suggestion=guess,
            message=message,
        ),
        likely=_slipped(name, guess, catalog),
    )


_taking: weakref.WeakKeyDictionary[ApiCatalog, dict[str, frozenset[int]]] = (
    weakref.WeakKeyDictionary()
)


def taking(arguments: Mapping[str, object], catalog: ApiCatalog) -> list[str]:
    """The documented APIs that take every one of ``arguments`` (names compared as the
    paper's literal variants: ``calendar_id`` is ``calendarId``), those that are then
    given all their required parameters first; ``[]`` for a call without arguments or
    one that no API takes whole. Indexed once per catalog: a call to an unknown tool
    of a 20,000-tool server is answered in microseconds.

    >>> catalog = ApiCatalog.from_tools([
    ...     {"name": "get_event", "parameters": {"type": "object", "properties": {
    ...         "event_id": {"type": "string"}}}},
    ...     {"name": "list_events", "parameters": {"type": "object", "properties": {
    ...         "calendar_id": {"type": "string"}, "start": {"type": "string"}}}}])
    >>> taking({"calendarId": "c1", "start": "2026-11-02"}, catalog)
    ['list_events']
    """
    keys = {literal_key(str(a)) for a in arguments}
    if not keys or "" in keys or len(keys) > 64:
        return []
    with _indexes_lock:
        index = _taking.get(catalog)
    if index is None:
        built: dict[str, set[int]] = {}
        for i, op in enumerate(catalog.operations):
            for p in op.parameters:
                built.setdefault(literal_key(p.name), set()).add(i)
        index = {k: frozenset(v) for k, v in built.items()}
        with _indexes_lock:
            _taking[catalog] = index
    found: frozenset[int] | None = None
    for key in keys:
        owners = index.get(key, frozenset())
        found = owners if found is None else found & owners
        if not found:
            return []
    ops = [catalog.operations[i] for i in sorted(found or ())]

    def complete(op: Operation) -> bool:
        return all(literal_key(p.name) in keys for p in op.parameters if p.required)

    seen: set[str] = set()
    out = []
    for op in sorted(ops, key=lambda op: not complete(op)):
        if op.name not in seen and catalog.get(op.name) is op:
            seen.add(op.name)
            out.append(op.name)
    return out


def _by_words(name: str, fitting: Sequence[str]) -> str | None:
    """Of the APIs that take the call's arguments (best first), the one sharing most
    words with ``name`` (``fetch_calendar_events`` and ``list_events`` share ``events``);
    ``None`` when none shares a word."""

    def stems(text: str) -> set[str]:
        return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words(text)}

    mine = stems(name)
    shared, _, best = max((len(mine & stems(f)), -i, f) for i, f in enumerate(fitting))
    return best if shared else None


def _slipped(name: str, guess: str | None, catalog: ApiCatalog) -> Operation | None:
    """The operation ``guess`` names when ``name`` is it with one slip of the keyboard
    inside a word (``getEvnt``), else ``None``."""
    if guess is None or not slip(name, guess):
        return None
    return catalog.get(guess)


def name_with_values(name: str, catalog: ApiCatalog) -> tuple[Operation, dict[str, str]] | None:
    """The operation whose name ``name`` is, with the values of its path parameters
    written in place of their names (``GET_movie-500-credits`` for
    ``GET_movie-movie_id-credits`` and ``/movie/{movie_id}/credits``), and those values;
    ``None`` when no name reads so. A value holds a digit and no separator (``-_./``), so
    that neither ``GET_tv-popular`` nor ``GET_movie-movie_id-keywords`` reads as
    ``GET_tv-tv_id`` or ``GET_movie-movie_id`` with a value.

    >>> op = Operation("GET_movie-movie_id-credits", method="GET", path="/movie/{movie_id}/credits")
    >>> name_with_values("GET_movie-500-credits", ApiCatalog([op]))[1]
    {'movie_id': '500'}
    """
    if not name or len(name) > 300 or catalog.get(name) is not None:
        return None
    for pattern, op, params in _name_patterns(catalog):
        if not name.startswith(pattern.prefix):
            continue
        m = pattern.fullmatch(name)
        if m is not None and all(any(c.isdigit() for c in g) for g in m.groups()):
            return op, dict(zip(params, m.groups(), strict=True))
    return None


class _NamePattern:
    __slots__ = ("fullmatch", "prefix")

    def __init__(self, regex: re.Pattern[str], prefix: str) -> None:
        self.fullmatch = regex.fullmatch
        self.prefix = prefix


_patterns: weakref.WeakKeyDictionary[ApiCatalog, list[tuple[_NamePattern, Operation, list[str]]]]
_patterns = weakref.WeakKeyDictionary()


def _name_patterns(catalog: ApiCatalog) -> list[tuple[_NamePattern, Operation, list[str]]]:
    """Per operation whose name spells out its path parameters, a pattern with a value in
    place of each (built once per catalog)."""
    with _indexes_lock:
        found = _patterns.get(catalog)
    if found is not None:
        return found
    found = []
    for op in catalog.operations:
        params = [v[1:-1] for v in _VAR_IN_PATH.findall(op.path or "")]
        regex, prefix, used, rest = "", None, [], op.name
        for param in params:
            at = re.search(rf"(?<![A-Za-z0-9]){re.escape(param)}(?![A-Za-z0-9])", rest)
            if at is None:
                continue
            if prefix is None:
                prefix = op.name[: len(op.name) - len(rest) + at.start()]
            regex += re.escape(rest[: at.start()]) + r"([^\s/()._-]+)"
            rest = rest[at.end() :]
            used.append(param)
        if used and prefix is not None:
            pattern = _NamePattern(re.compile(regex + re.escape(rest)), prefix)
            found.append((pattern, op, used))
    with _indexes_lock:
        _patterns[catalog] = found
    return found


def _fail(finding: Finding, likely: Operation | None = None) -> NameCheck:
    """The request names no documented API: one E2 finding says why."""
    return NameCheck(None, findings=(finding,), likely=likely)


def _semantic(
    name: str, candidates: Sequence[str], matcher: NameMatcher | None, threshold: float
) -> tuple[str, float] | None:
    if matcher is None or not candidates or not name.strip():
        return None
    ranked = matcher.name_similarity(name, candidates)
    if ranked and ranked[0].score >= threshold:
        return ranked[0].name, float(ranked[0].score)
    return None


_VAR = re.compile(r"^\{[^{}]+\}$")


_VAR_IN_PATH = re.compile(r"\{[^{}]+\}")


def _path_words(path: str) -> str:
    # numbers and ids say nothing about which API is meant
    parts = [p for p in re.split(r"[/_\-.{}]+", path) if p and not any(c.isdigit() for c in p)]
    return " ".join(parts)


def _check_http(
    request: ApiRequest, catalog: ApiCatalog, *, matcher: NameMatcher | None, threshold: float
) -> NameCheck:
    assert request.method is not None and request.url is not None
    method = request.method.upper()
    split = urlsplit(request.url)
    target = f"{method} {split.path or '/'}"
    netloc = split.netloc.rsplit("@", 1)[-1]  # user info is not part of the host
    # ``https://api.example.com:443`` is ``https://api.example.com``
    host = without_default_port(netloc.lower(), split.scheme)
    if netloc and catalog.hosts and host not in catalog.hosts:
        servers = ", ".join(catalog.servers)
        return _fail(
            Finding(
                "E2",
                ("url",),
                netloc,
                expected=list(catalog.servers),
                message=f"host {netloc!r} is not a server of this API; servers: {servers}",
            )
        )
    path = catalog.relative_path(request.url)
    sent = [*request.params, *(request.body if isinstance(request.body, Mapping) else ())]
    matched = catalog.match_http(method, request.url, sent)
    if matched is not None:
        return NameCheck(matched[0], path_params=matched[1])
    index = _index(catalog)
    # a log repeats its mistakes: the verdict on an unknown endpoint depends only on the
    # method, the path, the catalog and the matcher, so it is worked out once
    key = (id(matcher), threshold, method, path, target)
    with index.lock:
        hit = index.verdicts.get(key)
    if hit is not None and hit[0]() is matcher:
        return hit[1]
    verdict = _unknown_endpoint(index, catalog, method, path, target, matcher, threshold)
    try:
        # a weak reference: the memo lives as long as its catalog and must not keep a
        # matcher (or the scanner behind one) alive, nor be fooled by a reused id
        owner: Callable[[], object] = weakref.ref(matcher) if matcher is not None else _none
    except TypeError:
        return verdict  # a matcher that takes no weak reference is not memoised
    with index.lock:
        if len(index.verdicts) >= _MAX_VERDICTS:
            index.verdicts.clear()
        index.verdicts[key] = (owner, verdict)
    return verdict


def _none() -> None:
    return None


_MAX_VERDICTS = 4096


class _Template:
    """One documented ``METHOD path``, split once for the literal-variant comparison."""

    __slots__ = ("flat", "key", "op", "segments", "words")

    def __init__(self, op: Operation) -> None:
        assert op.path is not None
        self.op = op
        self.key = f"{op.method} {op.path}"
        # None where the template has a variable: it matches any segment
        self.segments = [
            None if _VAR.match(w) else literal_key(w) for w in op.path.strip("/").split("/")
        ]
        self.flat = literal_key(_VAR_IN_PATH.sub("", op.path))
        self.words = _path_words(op.path)


class _HttpIndex:
    """What the E2 checks of HTTP requests recompute per request otherwise: per method,
    the templates split into literal keys, and every ``METHOD path`` (the same for every
    request on a catalog; about 1 ms a request on a 900-operation spec)."""

    def __init__(self, catalog: ApiCatalog) -> None:
        self.by_method: dict[str, list[_Template]] = {}
        for op in catalog.operations:
            if op.is_http:
                self.by_method.setdefault(op.method or "", []).append(_Template(op))
        self.all_keys = [f"{op.method} {op.path}" for op in catalog.operations if op.is_http]
        self.verdicts: dict[tuple[object, ...], tuple[Callable[[], object], NameCheck]] = {}
        self.lock = threading.Lock()


_indexes: weakref.WeakKeyDictionary[ApiCatalog, _HttpIndex] = weakref.WeakKeyDictionary()
_indexes_lock = threading.Lock()


def _index(catalog: ApiCatalog) -> _HttpIndex:
    with _indexes_lock:
        found = _indexes.get(catalog)
        if found is None:
            found = _indexes[catalog] = _HttpIndex(catalog)
        return found


def _literal_match(got: list[str], flat: str, template: _Template) -> bool:
    """``/Movie/550/Credits`` or ``/movie_credits`` against ``/movie/{id}/credits``: the
    same segments once case and separators are ignored, variables matching anything
    (``got`` and ``flat``: the request path's segment keys and whole key)."""
    if len(got) != len(template.segments):
        return bool(flat) and flat == template.flat
    return all(w is None or g == w for g, w in zip(got, template.segments, strict=True))


def _unknown_endpoint(
    index: _HttpIndex,
    catalog: ApiCatalog,
    method: str,
    path: str,
    target: str,
    matcher: NameMatcher | None,
    threshold: float,
) -> NameCheck:
    where = ("api",)
    by_path = catalog.match_path(path)
    if by_path:
        allowed = sorted({op.method or "" for op, _ in by_path})
        return _fail(
            Finding(
                "E2",
                ("method",),
                method,
                expected=allowed,
                suggestion=allowed[0],
                message=f"{path} does not accept {method}; "
                f"documented methods: {', '.join(allowed)}",
            )
        )
    templates = index.by_method.get(method, [])
    got = [literal_key(g) for g in path.strip("/").split("/")]
    flat = literal_key(path)
    for t in templates:
        if _literal_match(got, flat, t):
            return _fail(
                Finding(
                    "E2.2",
                    where,
                    target,
                    expected=t.op.name,
                    suggestion=t.key,
                    message=f"{target} is not documented; it is a spelling variant of {t.key}",
                    doc=_describe(t.op),
                )
            )
    if matcher is not None and templates:
        by_key = {t.key: t for t in templates}
        words = {key: t.words for key, t in by_key.items()}
        ranked = matcher.name_similarity(_path_words(path), list(words.values()))
        if ranked and ranked[0].score >= threshold:
            key = next(k for k, w in words.items() if w == ranked[0].name)
            return _fail(
                Finding(
                    "E2.3",
                    where,
                    target,
                    expected=by_key[key].op.name,
                    suggestion=key,
                    message=f"{target} is not documented; the closest documented endpoint is "
                    f"{key} (similarity {ranked[0].score:.2f})",
                    doc=_describe(by_key[key].op),
                )
            )
    guess = closest_spelling(target, index.all_keys)
    return _fail(
        Finding(
            "E2",
            where,
            target,
            expected=index.all_keys[:20],
            suggestion=guess,
            message=f"{target} is not a documented endpoint",
        )
    )


def destructive(op: Operation) -> bool:
    """Whether calling ``op`` destroys something: an HTTP ``DELETE``, or a function whose
    name starts with delete, remove, cancel, revoke, ... (``DeleteAlarm``, ``cancel_order``).

    >>> destructive(Operation("deleteTodo")), destructive(Operation("getTodo"))
    (True, False)
    """
    if (op.method or "").upper() == "DELETE":
        return True
    words = _WORD.findall(op.name)
    return bool(words) and words[0].lower() in _DESTRUCTIVE


def _fits(
    op: Operation,
    context: str | None,
    instruction: str,
    catalog: ApiCatalog,
    ranker: ApiRanker,
    top_k: int,
) -> bool:
    """Whether ``op`` is the retriever's first choice (top ``k``) for the whole request
    ``context``; False when there is no context beyond the instruction."""
    if not context or not context.strip() or context.strip() == instruction.strip():
        return False
    return op.name in [r.name for r in ranker.rank(context, catalog, k=top_k)]


def check_selection(
    op: Operation,
    instruction: str,
    catalog: ApiCatalog,
    ranker: ApiRanker,
    *,
    top_k: int = 1,
    confident_margin: float = CONFIDENT_MARGIN,
    warn_margin: float = WARN_MARGIN,
    context: str | None = None,
) -> Finding | None:
    """E2.1: ``op`` is real but the retriever does not rank it in the top ``k`` for the
    instruction. The retriever can be wrong, so it is reported only when the best API
    beats the chosen one by ``warn_margin`` in cosine similarity (below that it is
    noise), as a warning, and as an error from ``confident_margin`` on, or at once when
    the chosen API is :func:`destructive` (a wrong delete cannot be undone).

    ``context`` is the whole request when ``instruction`` is only its latest part (the
    last user turn of a dialogue: "my username is foo" after "delete my account"). A
    destructive API that fits the whole request is not made an error by that rule: the
    user asked for it, earlier.

    >>> WARN_MARGIN, CONFIDENT_MARGIN
    (0.05, 0.25)
    """
    if len(catalog) <= top_k or not instruction.strip():
        return None
    ranked = list(ranker.rank(instruction, catalog))
    top = [r.name for r in ranked[:top_k]]
    if op.name in top:
        return None
    scores = {r.name: float(r.score) for r in ranked}
    margin = scores[ranked[0].name] - scores.get(op.name, 0.0)
    if margin < warn_margin:
        return None
    sure = margin >= confident_margin or (
        destructive(op) and not _fits(op, context, instruction, catalog, ranker, top_k)
    )
    severity: Severity = "error" if sure else "warning"
    best = ranked[0].name
    return Finding(
        "E2.1",
        ("api",),
        op.name,
        expected=top,
        suggestion=best,
        severity=severity,
        message=f"API {op.name!r} exists but does not fit the instruction; {best!r} fits "
        f"better (similarity {scores[best]:.2f} vs {scores.get(op.name, 0.0):.2f})",
        operation=op.name,
        doc=_describe(catalog.get(best) or Operation(best)),
    )
