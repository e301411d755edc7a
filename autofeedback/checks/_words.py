"""What a name says: its words, whether two names are the same words, whether one is a
keyboard slip of the other, opposites, and the effect of calling an operation.

The repair rule (:mod:`autofeedback.decide._repairs`) renames a call only where the
words are the same words: the same after case and separators (``user_login`` and
``userLogin``), or one word written with a slip of the keyboard (``getEvnt`` for
``getEvent``), where the word the model wrote is no English word (``count`` is not a
slip of ``mount``, nor ``item`` of ``items``) and the documented operation does not do
more than the name the model wrote says (:func:`stronger`: a read never becomes a
write, a write never a delete, one never many).

English words are pyspellchecker's English word list (160,000 words with their
frequencies, made for telling a misspelling from a word), loaded on first use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Literal

from autofeedback.core._model import Operation

__all__ = [
    "DESTRUCTIVE",
    "READ",
    "WRITE",
    "Effect",
    "is_word",
    "name_effect",
    "no_side_effects",
    "operation_effect",
    "opposite",
    "plural_pair",
    "same_words",
    "slip",
    "stronger",
    "words",
]

#: a function named after the HTTP operation it was made from: ``GET_me``, ``PUT_me_player``
_HTTP_NAMED = re.compile(r"^(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)_")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")

#: what calling an operation does, weakest first: a read changes nothing, a write
#: changes or adds, a destructive call deletes, resets or revokes
Effect = Literal[0, 1, 2]
READ: Effect = 0
WRITE: Effect = 1
DESTRUCTIVE: Effect = 2

_READ_VERBS = frozenset(
    {
        *("get", "list", "fetch", "read", "search", "find", "query", "show", "view"),
        *("describe", "lookup", "look", "check", "count", "retrieve", "browse", "inspect"),
        *("preview", "peek", "head", "select", "download", "export", "stat", "watch"),
        *("validate", "verify", "estimate", "calculate", "compute", "convert", "translate"),
        *("summarize", "explain", "compare", "recommend", "suggest", "resolve", "poll"),
        *("is", "has", "can", "exists", "info", "detail", "details", "status", "load"),
    }
)
_WRITE_VERBS = frozenset(
    {
        *("set", "update", "put", "post", "create", "add", "insert", "patch", "edit"),
        *("modify", "change", "save", "write", "upload", "send", "submit", "make", "book"),
        *("place", "register", "assign", "enable", "disable", "start", "stop", "run"),
        *("execute", "exec", "mount", "attach", "share", "publish", "move", "rename"),
        *("replace", "import", "apply", "approve", "transfer", "pay", "order", "rotate"),
        *("restore", "invite", "subscribe", "follow", "like", "mark", "schedule"),
        *("trigger", "sync", "merge", "copy", "deploy", "install", "configure", "grant"),
        *("generate", "new", "open", "close", "lock", "unlock", "reply", "post", "push"),
        *("upsert", "store", "record", "log", "tag", "label", "invoke", "call", "reboot"),
        *("restart", "resume", "pause", "scale", "resize", "login", "logout", "sign"),
        *("accept", "reject", "confirm", "buy", "sell", "charge", "refund", "release"),
    }
)
_DESTRUCTIVE_VERBS = frozenset(
    {
        *("delete", "remove", "destroy", "drop", "purge", "erase", "cancel", "revoke"),
        *("reset", "wipe", "clear", "truncate", "kill", "terminate", "uninstall"),
        *("flush", "prune", "empty", "ban", "unsubscribe", "deactivate", "unregister"),
        *("del", "rm", "nuke", "shred", "expunge", "void", "overwrite", "discard"),
    }
)
#: words that make an operation act on many where the model's name acts on one
_MANY = frozenset({"all", "bulk", "batch", "many", "every", "mass", "multi", "multiple"})

#: pairs of words that mean the opposite of each other: a name is never renamed from
#: one to the other, whatever else the names share
_OPPOSITE_PAIRS = (
    ("private", "public"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("lower", "upper"),
    ("low", "high"),
    ("start", "end"),
    ("begin", "end"),
    ("first", "last"),
    ("sender", "recipient"),
    ("sender", "receiver"),
    ("from", "to"),
    ("source", "target"),
    ("source", "destination"),
    ("origin", "destination"),
    ("src", "dst"),
    ("src", "dest"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("includes", "excludes"),
    ("allow", "deny"),
    ("allow", "block"),
    ("allowed", "denied"),
    ("allowed", "blocked"),
    ("allowlist", "denylist"),
    ("whitelist", "blacklist"),
    ("before", "after"),
    ("since", "until"),
    ("older", "newer"),
    ("old", "new"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("on", "off"),
    ("true", "false"),
    ("yes", "no"),
    ("input", "output"),
    ("in", "out"),
    ("inbound", "outbound"),
    ("incoming", "outgoing"),
    ("upload", "download"),
    ("add", "remove"),
    ("buy", "sell"),
    ("debit", "credit"),
    ("income", "expense"),
    ("asc", "desc"),
    ("ascending", "descending"),
    ("open", "close"),
    ("opened", "closed"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("show", "hide"),
    ("visible", "hidden"),
    ("read", "write"),
    ("get", "set"),
    ("push", "pull"),
    ("lock", "unlock"),
    ("above", "below"),
    ("over", "under"),
    ("more", "less"),
    ("prev", "next"),
    ("previous", "next"),
    ("left", "right"),
    ("parent", "child"),
    ("request", "response"),
    ("win", "lose"),
    ("success", "failure"),
    ("plus", "minus"),
    ("increase", "decrease"),
    ("inc", "dec"),
    ("up", "down"),
    ("push", "pop"),
    ("encrypt", "decrypt"),
    ("encode", "decode"),
    ("import", "export"),
    ("subscribe", "unsubscribe"),
    ("follow", "unfollow"),
    ("mute", "unmute"),
    ("archive", "unarchive"),
    ("grant", "revoke"),
    ("approve", "deny"),
    ("online", "offline"),
    ("internal", "external"),
)
_OPPOSITES: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSITE_PAIRS:
    _OPPOSITES[_a] = _OPPOSITES.get(_a, frozenset()) | {_b}
    _OPPOSITES[_b] = _OPPOSITES.get(_b, frozenset()) | {_a}
_NEGATIONS = ("un", "non", "dis", "de", "in", "not", "no")


def words(name: str) -> list[str]:
    """The words of an identifier, lower-cased: camelCase, snake_case, kebab-case, digits.

    >>> words("getUserByID"), words("delete_records"), words("HTTPServer2")
    (['get', 'user', 'by', 'id'], ['delete', 'records'], ['http', 'server', '2'])
    """
    return [w.lower() for w in _WORD.findall(name)]


def _key(name: str) -> str:
    return _NON_ALNUM.sub("", name.lower())


def same_words(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are the same words written with another case or other
    separators (the paper's literal variants).

    >>> same_words("user_login", "userLogin"), same_words("get_config", "set_config")
    (True, False)
    """
    key = _key(a)
    return bool(key) and key == _key(b) and a.isascii() == b.isascii()


@functools.cache
def _english_counts() -> dict[str, int]:
    from spellchecker import SpellChecker

    return dict(SpellChecker(language="en", distance=1).word_frequency.items())


def is_word(token: str) -> bool:
    """Whether ``token`` is an English word (pyspellchecker's English list), compared
    lower-cased; numbers are words too.

    >>> is_word("mount"), is_word("evnt"), is_word("42")
    (True, False, True)
    """
    t = token.lower()
    return t.isdigit() or t in _english_counts()


def plural_pair(a: str, b: str) -> bool:
    """Whether one word is the other's plural (``item``/``items``, ``entry``/``entries``,
    ``box``/``boxes``).

    >>> plural_pair("entry", "entries"), plural_pair("item", "item")
    (True, False)
    """
    short, long_ = sorted((a, b), key=len)
    return long_ in (short + "s", short + "es") or (
        short.endswith("y") and long_ == short[:-1] + "ies"
    )


#: the shortest documented word a slip may be in: shorter words are one letter away
#: from too many others (``sub``/``sum``, ``to``/``tp``)
SLIP_MIN = 4


def slip(written: str, documented: str) -> bool:
    """Whether ``written`` is ``documented`` with one slip of the keyboard inside one of
    its words (a letter left out, added, changed, or two neighbours swapped): the two
    compared case- and separator-blind are one edit apart, the edit falls inside one
    documented word of at least :data:`SLIP_MIN` letters, and what the model wrote in
    that word's place is no English word and not the word's singular or plural.

    >>> slip("getEvnt", "getEvent"), slip("substract", "subtract")
    (True, True)
    >>> slip("count_volume", "mount_volume"), slip("remove_item", "remove_items")
    (False, False)
    >>> slip("get_config", "set_config"), slip("getconfig", "setconfig")
    (False, False)
    """
    if not written.isascii() or not documented.isascii():
        return False
    a, b = _key(written), _key(documented)
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    from rapidfuzz.distance import OSA  # 9 ms of import: only a name that missed needs it

    if OSA.distance(a, b, score_cutoff=1) != 1:
        return False
    # the documented name's words as spans of its key
    spans: list[tuple[int, int]] = []
    at = 0
    for w in words(documented):
        start = b.find(w, at)
        if start < 0:
            return False
        spans.append((start, start + len(w)))
        at = start + len(w)
    # where the two keys differ: the same prefix and suffix around one edit
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lo, hi = head, len(b) - tail  # the documented part that differs (may be empty)
    # every documented word the edit may belong to (an insertion at a boundary may be
    # read as the end of one word or the start of the next): each reading must be a slip
    readings = [
        (s, e) for s, e in spans if (s <= lo and hi <= e) and (lo < e or hi > s or lo == hi)
    ]
    if not readings:
        return False  # the edit crosses a word boundary: not one word misspelt
    shift = len(a) - len(b)
    for s, e in readings:
        theirs = b[s:e]
        mine = a[s : e + shift]
        if len(theirs) < SLIP_MIN or is_word(mine) or plural_pair(mine, theirs):
            return False
        if is_word(theirs):
            continue
        # words written without separators (``setconfig``): the common English words
        # inside that hold the edit must not become other common words (``getconfig``)
        for i in range(s, lo + 1):
            for j in range(max(hi, i + 3), e + 1):
                if _common(b[i:j]) and _common(a[i : j + shift]):
                    return False
    return True


#: how often (pyspellchecker's count) a word inside a longer one must occur to be read
#: as a word there: ``set`` and ``get`` do, ``gte`` and ``sta`` do not
_COMMON = 1000


def _common(token: str) -> bool:
    return _english_counts().get(token, 0) >= _COMMON


def opposite(a: str, b: str) -> bool:
    """Whether names ``a`` and ``b`` differ by words of opposite meaning (``private`` and
    ``public``, ``min_price`` and ``max_price``, ``sender`` and ``recipient``), or one
    negates a word of the other (``include_archived``/``unarchived``, ``enabled``/
    ``disabled``).

    >>> opposite("max_price", "min_price"), opposite("sender", "recipient")
    (True, True)
    >>> opposite("is_visible", "is_invisible"), opposite("limit", "maxResults")
    (True, False)
    """
    wa, wb = set(words(a)), set(words(b))
    only_a, only_b = wa - wb, wb - wa
    for x in only_a:
        for y in only_b:
            if y in _OPPOSITES.get(x, ()):
                return True
            for neg in _NEGATIONS:
                if x == neg + y or y == neg + x:
                    return True
    return False


def _unversioned(tokens: Sequence[str]) -> list[str]:
    """``tokens`` without the numbers and versions in them (``v2``, ``api_v1``: ``words``
    splits ``v2`` into ``v`` and ``2``), where a name's verb is looked for.

    >>> _unversioned(words("api_v1_delete_user")), _unversioned(words("oauth2_get_token"))
    (['api', 'delete', 'user'], ['oauth', 'get', 'token'])
    """
    out = []
    for i, t in enumerate(tokens):
        if t.isdigit() or (len(t) == 1 and i + 1 < len(tokens) and tokens[i + 1].isdigit()):
            continue
        out.append(t)
    return out


def _verb_effect(tokens: Sequence[str]) -> Effect | None:
    """The effect the first verb of a name says (``None``: no verb this module knows)."""
    tokens = _unversioned(tokens)
    for t in tokens[:2]:  # the verb leads (``getUser``), at most after a prefix (``api_get``)
        if t in _DESTRUCTIVE_VERBS:
            return DESTRUCTIVE
        if t in _WRITE_VERBS:
            return WRITE
        if t in _READ_VERBS:
            return READ
    return None


def _glued_effect(name: str) -> Effect | None:
    """The effect of a name written without separators (``getconfig``, ``purgealldata``):
    the longest known verb it starts with."""
    key = _key(name)
    best: tuple[int, Effect] | None = None
    for verbs, effect in (
        (_DESTRUCTIVE_VERBS, DESTRUCTIVE),
        (_WRITE_VERBS, WRITE),
        (_READ_VERBS, READ),
    ):
        for v in verbs:
            if len(v) >= 3 and key.startswith(v) and (best is None or len(v) > best[0]):
                best = (len(v), effect)
    return best[1] if best is not None else None


def name_effect(name: str) -> Effect | None:
    """What a name says its call does, from its verb: :data:`READ`, :data:`WRITE`,
    :data:`DESTRUCTIVE`, or ``None`` where it names no verb this module knows.

    >>> name_effect("getUser"), name_effect("set_config"), name_effect("purgeAllData")
    (0, 1, 2)
    >>> name_effect("weather") is None
    True
    """
    tokens = words(name)
    effect = _verb_effect(tokens)
    if effect is None and len(tokens) == 1:
        effect = _glued_effect(name)
    return effect


def operation_effect(op: Operation) -> Effect | None:
    """What calling ``op`` does, the strongest of what its HTTP method, its MCP
    annotations (``readOnlyHint``, ``destructiveHint``) and its name's verb say;
    ``None`` where none of them says anything.

    >>> operation_effect(Operation("getUser", method="DELETE", path="/u/{id}"))
    2
    >>> operation_effect(Operation("fetch", read_only=True)), operation_effect(Operation("x"))
    (0, None)
    """
    if op.read_only is True and op.destructive is not True:
        return READ
    found: list[Effect] = []
    method = (op.method or "").upper()
    if method in ("GET", "HEAD", "OPTIONS"):
        found.append(READ)
    elif method == "DELETE":
        found.append(DESTRUCTIVE)
    elif method:
        found.append(WRITE)
    if op.destructive is True:
        found.append(DESTRUCTIVE)
    elif op.read_only is False:
        found.append(WRITE)
    by_name = name_effect(op.name)
    if by_name is not None:
        found.append(by_name)
    return max(found) if found else None


def no_side_effects(op: Operation) -> bool:
    """Whether the spec says calling ``op`` changes nothing: an HTTP ``GET`` or ``HEAD``,
    or an MCP tool with ``readOnlyHint`` (and nothing in its name that deletes). A
    function with neither says nothing: its name alone is no promise.

    >>> no_side_effects(Operation("listOrders", method="GET", path="/orders"))
    True
    >>> no_side_effects(Operation("placeOrder", method="POST", path="/orders"))
    False
    >>> no_side_effects(Operation("devices")), no_side_effects(Operation("devices", read_only=True))
    (False, True)
    >>> no_side_effects(Operation("GET_me")), no_side_effects(Operation("POST_me_playlists"))
    (True, False)
    """
    method = (op.method or "").upper()
    if not method and _HTTP_NAMED.match(op.name):
        # a function made from an HTTP operation says its method in its name
        # (GraphQL-RestBench's ``GET_me``, ``GET_search_movie``)
        method = op.name.split("_", 1)[0]
    said = op.read_only is True or method in ("GET", "HEAD")
    return said and op.destructive is not True and operation_effect(op) == READ


def _many(name: str) -> bool:
    return any(w in _MANY for w in words(name))


def stronger(written: str, target: Operation) -> bool:
    """Whether calling ``target`` would do more than a call named ``written`` says: a
    stronger effect (read to write, anything to delete or reset), or many where the
    name says one (``deleteUser`` to ``deleteAllUsers``). A name that says nothing
    (``weather``) says at most a read.

    >>> stronger("getUser", Operation("setUser"))
    True
    >>> stronger("get_usr", Operation("get_user")), stronger("delete_usr", Operation("delete_user"))
    (False, False)
    >>> stronger("wipeCache", Operation("purgeAllData"))
    True
    >>> stronger("creat_ticket", Operation("create_ticket"))  # a slip in the verb
    False
    >>> stronger("delet_user", Operation("delete_user"))  # ...but never into a delete
    True
    """
    target_effect = operation_effect(target)
    mine = name_effect(written)
    if mine is None:
        mine = _slipped_verb(written, target.name)
    if target_effect is not None and target_effect > (mine if mine is not None else READ):
        return True
    return _many(target.name) and not _many(written)


def _slipped_verb(written: str, documented: str) -> Effect | None:
    """The effect of ``written``'s verb where it is ``documented``'s verb with a keyboard
    slip (``creat_ticket`` for ``create_ticket``): that verb, the model meant it; never a
    destructive one (``delet_user`` is asked about, not sent)."""
    mine, theirs = _unversioned(words(written)), _unversioned(words(documented))
    if not mine or not theirs or mine[1:] != theirs[1:] or is_word(mine[0]):
        return None
    from rapidfuzz.distance import OSA

    if OSA.distance(mine[0], theirs[0], score_cutoff=1) != 1:
        return None
    effect = _verb_effect(theirs[:1])
    return effect if effect is not None and effect < DESTRUCTIVE else None
