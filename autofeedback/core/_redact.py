"""One redaction for every output: credentials never reach findings, feedback, reports,
traces, exception messages or logs.

What counts as a credential:

* header, query, form and body field *names*: ``Authorization``, ``Proxy-Authorization``,
  ``Cookie``/``Set-Cookie``, API-key names (:data:`SENSITIVE`), any name whose words
  include ``password``, ``secret``, ``token``, ``apikey``, ``credential``... (so
  ``access_token`` and ``clientSecret`` are, ``max_tokens`` and ``author`` are not),
  payment and personal secrets (``cvv``, ``card_number``, ``ssn``, ``pin``...), the
  names one slip of the keyboard away from any of these (``api_kye``, ``passwrod``,
  ``acces_tokne``: a credential the model misspelt is still a credential), plus the
  names a spec's ``securitySchemes`` declare (passed as ``names``);
* URL user info (``https://user:PASSWORD@host/``);
* ``Bearer``/``Basic`` credentials written anywhere in text;
* every value known to be a secret (``secrets``, e.g. the ones a request carried), wherever
  it appears.

:func:`redact` is the one function: mappings lose the values of sensitive keys, strings
get the text patterns and the known secret values masked, lists and tuples are walked.
:func:`redact_finding` and :func:`request_secrets` are built on it.

>>> redact({"Authorization": "Bearer abc", "Accept": "json"})
{'Authorization': '[REDACTED]', 'Accept': 'json'}
>>> redact("curl https://bob:hunter2@api.example.com/x?api_key=K123&q=1")
'curl https://REDACTED@api.example.com/x?api_key=[REDACTED]&q=1'
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

if TYPE_CHECKING:
    from autofeedback.core._findings import Finding, Repair
    from autofeedback.core._model import ApiRequest

__all__ = [
    "REDACTED",
    "SENSITIVE",
    "USERINFO_MASK",
    "auth_names",
    "credential_values",
    "is_sensitive",
    "redact",
    "redact_finding",
    "redact_repair",
    "request_secrets",
    "url_secrets",
    "value_secrets",
]

REDACTED = "[REDACTED]"
#: User info is masked without brackets: ``http://[REDACTED]@host`` would no longer be a
#: URL (brackets in a netloc are an IPv6 literal), ``http://REDACTED@host`` still is.
USERINFO_MASK = "REDACTED"

#: Header and query names whose values are credentials, whatever the spec says.
SENSITIVE = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "apikey",
        "api_key",
        "x-auth-token",
        "x-access-token",
        "access_token",
        "token",
        "key",
        "secret",
        "client_secret",
        "password",
        "x-rapidapi-key",
        "session",
        "x-session",
        "sessionid",
        "x-csrf-token",
        "x-xsrf-token",
        "private_key",
        "auth",
        "x-auth",
        "x-amz-security-token",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        # payment and personal secrets
        "pin",
        "cvv",
        "cvc",
        "cvv2",
        "cvc2",
        "ssn",
    }
)

# Words that make a name a credential wherever they stand in it (``db_password``,
# ``clientSecret``, ``refresh-token``); whole words only: ``max_tokens``, ``author``
# and ``keyword`` stay readable.
_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "token",
        "apikey",
        "credential",
        "credentials",
        "cookie",
        "authorization",
        "bearer",
        "signature",
        "cvv",
        "cvc",
        "cvv2",
        "cvc2",
        "ssn",
        "cardnumber",
        "pincode",
    }
)
# pairs of words that make one: api key, access key, private key, session id...
_PAIRS = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("subscription", "key"),
        ("session", "id"),
        ("auth", "key"),
        ("client", "secret"),
        ("card", "number"),
        ("card", "cvv"),
        ("card", "cvc"),
        ("card", "pin"),
        ("security", "code"),
        ("social", "security"),
        ("pin", "code"),
        ("pin", "number"),
    }
)
# The words a name may hold misspelt by one slip of the keyboard and still be taken for a
# credential (long enough that a slip of them is no other word a spec uses: "passwd" is
# one key from "passed", "pwd" and "ssn" from many things)
_SLIP_WORDS = frozenset(
    {
        "password",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "credential",
        "credentials",
        "cookie",
        "authorization",
        "signature",
        "cardnumber",
    }
)

#: the slip words a word of each length may be one slip from (one letter more or less)
_SLIP_BY_LENGTH: dict[int, tuple[str, ...]] = {
    n: tuple(t for t in sorted(_SLIP_WORDS) if abs(len(t) - n) <= 1)
    for n in range(1, max(map(len, _SLIP_WORDS)) + 2)
}
#: per word of a pair, the words it makes a credential with (after it, before it)
_PAIR_SECOND: dict[str, tuple[str, ...]] = {
    x: tuple(sorted(y for a, y in _PAIRS if a == x)) for x, _ in _PAIRS
}
_PAIR_FIRST: dict[str, tuple[str, ...]] = {
    y: tuple(sorted(x for x, b in _PAIRS if b == y)) for _, y in _PAIRS
}


def _keyboard() -> dict[str, frozenset[str]]:
    """Each letter's neighbours on a QWERTY keyboard (the rows are offset by about half a
    key: the same and next column above, the same and previous column below)."""
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    near: dict[str, frozenset[str]] = {}
    for r, row in enumerate(rows):
        for c, letter in enumerate(row):
            found = {row[j] for j in (c - 1, c + 1) if 0 <= j < len(row)}
            if r > 0:
                found |= {rows[r - 1][j] for j in (c, c + 1) if j < len(rows[r - 1])}
            if r + 1 < len(rows):
                found |= {rows[r + 1][j] for j in (c - 1, c) if 0 <= j < len(rows[r + 1])}
            near[letter] = frozenset(found)
    return near


#: a slip replaces a letter with one of its neighbours, or adds one beside it
_NEAR = _keyboard()


def _slip(word: str, target: str) -> bool:
    """Whether ``word`` is ``target`` typed with one slip: two neighbouring letters
    swapped, one letter left out, one key beside the right one pressed instead, or one
    extra key (the same again, or a neighbour) pressed; never the plural (``tokens``).

    >>> [_slip(w, "token") for w in ("tokne", "tiken", "toke", "tokken", "tokens", "taken")]
    [True, True, True, True, False, False]
    """
    if word == target or abs(len(word) - len(target)) > 1 or len(word) < 2:
        return False
    if len(target) >= 3 and word[0] != target[0] and word[-1] != target[-1]:
        return False  # one slip leaves the first letter or the last one as it was
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            i = diff[0]
            return word[i] in _NEAR.get(target[i], frozenset())
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == target[diff[1]]
            and word[diff[1]] == target[diff[0]]
        )
    if len(word) < len(target):
        return any(target[:i] + target[i + 1 :] == word for i in range(len(target)))
    if word == target + "s":
        return False
    for i in range(len(word)):
        if word[:i] + word[i + 1 :] == target:
            extra = word[i]
            beside = {word[j] for j in (i - 1, i + 1) if 0 <= j < len(word) and j != i}
            return any(extra == b or extra in _NEAR.get(b, frozenset()) for b in beside)
    return False


_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
# a secret shorter than this is not searched for in text: it would mask common words
_MIN_SECRET = 4
_MAX_DEPTH = 64
_MAX_SHOWN = 4096

# Every pattern below runs on untrusted text of any size, so each is linear: matches
# start only at the edge of a run (a look-behind), no two quantifiers can split the same
# characters, and the quoted value has one way to match (no catastrophic backtracking on
# ``"password": "\\\\\\...``).
_USERINFO = re.compile(r"(?i)(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]{0,20}://)[^\s/@?#'\"<>]{1,512}@")
# ``user:password@host`` without a scheme (a netloc quoted in a message)
_NETLOC_USERINFO = re.compile(
    r"(?<![^\s'\"(<=,\[])[^\s/@?#'\"<>:\[]{1,256}:[^\s/@?#'\"<>]{1,512}@(?=[A-Za-z0-9\[])"
)
# curl's ``-u user:password`` / ``--user`` / ``--proxy-user``
_CURL_USER = re.compile(
    r"(?i)((?:^|(?<=\s))(?:-u|-U|--user|--proxy-user)[\s=]+['\"]?)([^\s'\":]*:)([^\s'\"]+)"
)
# ``Bearer <token>`` and ``Basic <base64>`` anywhere; prose stays readable ("token must
# be an integer", "basic rules"): a Basic credential is base64 of 8+ characters
_AUTH_SCHEME = re.compile(
    r"\b([Bb]earer|BEARER)(\s+)[A-Za-z0-9._~+/=\-]{4,}|\b(Basic|BASIC)(\s+)[A-Za-z0-9+/]{8,}={0,2}"
)
_NAME = r"[A-Za-z0-9_.\-\[\]]"
# ``name=value`` in a query string, form body, curl data or a Python call
_PAIR = re.compile(rf"(?<!{_NAME})({_NAME}{{1,100}})(=)([^&#\s,;)'\"<>]{{1,4096}})")
# ``"name": "value"`` / ``'name': 'value'`` / ``name="value"``
_QUOTED = re.compile(
    r"(?<![A-Za-z0-9_.\-\"'])([\"']?)([A-Za-z0-9_.\-]{1,100})\1(\s{0,20}[:=]\s{0,20})([\"'])"
    r"((?:\\.|(?!\4)[^\\]){0,4096}+)\4"
)
# ``Name: value`` header lines (``> Authorization: ...`` in curl -v output too)
_HEADER = re.compile(r"(?im)^([ \t>-]*)([A-Za-z0-9_][A-Za-z0-9_\-]{0,99})(:[ \t]*)([^\r\n'\"]+)")
_HEADER_INLINE = re.compile(r"(?i)([\"'])([A-Za-z0-9_\-]{1,100})(:[ \t]*)([^\r\n'\"]+)\1")


def _auth_scheme(m: re.Match[str]) -> str:
    scheme, space = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return f"{scheme}{space}{REDACTED}"


@lru_cache(maxsize=4096)
def _sensitive_name(low: str, original: str) -> bool:
    if low in SENSITIVE:
        return True
    words = [w.lower() for w in _SPLIT.split(original) if w]
    if any(w in _WORDS for w in words):
        return True
    if any(pair in _PAIRS for pair in pairwise(words)):
        return True
    # one slip away: a long credential word, or one word of a pair beside the other
    # (the candidates looked up by length and by the other word: a log of a million
    # distinct keys passes through here)
    for w in words:
        if len(w) >= 4 and any(_slip(w, t) for t in _SLIP_BY_LENGTH.get(len(w), ())):
            return True
    for a, b in pairwise(words):
        if any(_slip(b, y) for y in _PAIR_SECOND.get(a, ())):
            return True
        if any(_slip(a, x) for x in _PAIR_FIRST.get(b, ())):
            return True
    return False


def is_sensitive(name: Any, extra: Collection[str] = ()) -> bool:
    """Whether a header, query, form or body field called ``name`` holds a credential.

    >>> [is_sensitive(n) for n in ("Authorization", "access_token", "max_tokens", "author")]
    [True, True, False, False]
    """
    if not isinstance(name, str) or not name:
        return False
    low = name.lower()
    return low in extra or _sensitive_name(low, name[:200])


class _Redactor:
    def __init__(self, names: Iterable[str], secrets: Iterable[str]) -> None:
        self.names = frozenset(n.lower() for n in names if isinstance(n, str))
        # longest first, so a token is not left half-masked by a shorter one inside it
        self.secrets = sorted(
            {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_SECRET},
            key=len,
            reverse=True,
        )

    def name(self, name: Any) -> bool:
        return is_sensitive(name, self.names)

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if self.secrets and f"{REDACTED}@" in text:
            text = text.replace(f"{REDACTED}@", f"{USERINFO_MASK}@")
        if "@" in text:
            text = _USERINFO.sub(rf"\1{USERINFO_MASK}@", text)
            text = _NETLOC_USERINFO.sub(f"{USERINFO_MASK}@", text)
        text = _AUTH_SCHEME.sub(_auth_scheme, text)
        if "-u" in text or "-U" in text or "user" in text:
            text = _CURL_USER.sub(rf"\1\2{REDACTED}", text)
        if "=" in text:
            text = _PAIR.sub(self._pair, text)
        if ":" in text or "=" in text:
            text = _QUOTED.sub(self._quoted, text)
        if ":" in text:
            text = _HEADER.sub(self._header, text)
            text = _HEADER_INLINE.sub(self._header_inline, text)
        return text

    def _pair(self, m: re.Match[str]) -> str:
        if m.group(3) == REDACTED or not self.name(m.group(1).strip("[]")):
            return m.group(0)
        return f"{m.group(1)}={REDACTED}"

    def _quoted(self, m: re.Match[str]) -> str:
        if m.group(5) == REDACTED or not self.name(m.group(2)):
            return m.group(0)
        q = m.group(4)
        return f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{q}{REDACTED}{q}"

    def _header(self, m: re.Match[str]) -> str:
        if REDACTED in m.group(4) or not self.name(m.group(2)):
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}"

    def _header_inline(self, m: re.Match[str]) -> str:
        if REDACTED in m.group(4) or not self.name(m.group(2)):
            return m.group(0)
        q = m.group(1)
        return f"{q}{m.group(2)}{m.group(3)}{REDACTED}{q}"

    def value(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if depth > _MAX_DEPTH:
            return value if isinstance(value, (int, float, bool)) or value is None else REDACTED
        if isinstance(value, Mapping):
            return {
                k: (REDACTED if self.name(k) and v is not None else self.value(v, depth + 1))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(v, depth + 1) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v, depth + 1) for v in value)
        return value


def redact(value: Any, *, names: Iterable[str] = (), secrets: Iterable[str] = ()) -> Any:
    """``value`` with every credential masked: the one redaction every output passes
    through. Mappings keep their keys and lose the values of sensitive ones; strings
    get URL user info, ``Bearer`` credentials, sensitive ``name=value`` /
    ``"name": "value"`` / ``Name: value`` pairs and every known ``secrets`` value masked;
    lists and tuples are walked; anything else is returned as is. ``names`` adds
    sensitive names (a spec's ``securitySchemes``).

    >>> redact({"q": "dune", "X-Shop-Key": "s3cr3t"}, names=["X-Shop-Key"])
    {'q': 'dune', 'X-Shop-Key': '[REDACTED]'}
    >>> redact("sent with token abcd1234", secrets=["abcd1234"])
    'sent with token [REDACTED]'
    """
    return _Redactor(names, secrets).value(value)


def redact_finding(
    finding: Finding, *, names: Iterable[str] = (), secrets: Iterable[str] = ()
) -> Finding:
    """``finding`` with its ``got``, ``expected``, ``message`` and ``suggestion`` redacted;
    a finding located at a sensitive name (``("header", "Authorization")``) loses its
    ``got`` entirely, unless that ``got`` is the name itself (E3 "unknown parameter
    'token'": the fix the model needs names it); a ``got`` text longer than 4,096
    characters is cut there. The ``doc`` line comes from the spec and is kept.

    >>> from autofeedback.core._findings import Finding
    >>> f = Finding("E3", ("query", "api_key"), "K123", message="unknown query parameter")
    >>> redact_finding(f).got
    '[REDACTED]'
    """
    r = _Redactor(names, secrets)
    got = finding.got
    if isinstance(got, str) and len(got) > _MAX_SHOWN:
        got = got[:_MAX_SHOWN] + "..."  # a report shows the start of a huge value
    if got is not None and finding.location and got == finding.location[-1]:
        pass  # an unknown-name finding's got is the parameter's name, not its value
    elif finding.location and r.name(finding.location[-1]) and got is not None:
        got = REDACTED
    else:
        got = r.value(got)
    suggestion = finding.suggestion
    expected = r.value(finding.expected)
    message = r.text(finding.message)
    if got == REDACTED and isinstance(finding.got, (str, int, float)):
        # the value at a credential's place, however short ("cvv must be an integer,
        # got string '987'"): shorter ones than a known secret is searched for in text
        shown = str(finding.got)
        if shown and not isinstance(finding.got, bool):
            message = re.sub(rf"(?<!\w){re.escape(shown)}(?!\w)", REDACTED, message)
    if isinstance(suggestion, str):
        suggestion = r.text(suggestion)
    if (got, expected, message, suggestion) == (
        finding.got,
        finding.expected,
        finding.message,
        finding.suggestion,
    ):
        return finding  # nothing to mask: the common case, no copy
    return dataclasses.replace(
        finding, got=got, expected=expected, message=message, suggestion=suggestion
    )


def redact_repair(
    repair: Repair, *, names: Iterable[str] = (), secrets: Iterable[str] = ()
) -> Repair:
    """``repair`` as it may be shown: a value at a sensitive name (``("argument",
    "token")``) is masked before and after, unless it is a name (a renamed parameter);
    credentials anywhere else in the values are masked as everywhere.

    >>> from autofeedback.core._findings import Repair
    >>> redact_repair(Repair("E5.3", ("argument", "token"), "xxx", "tok-123")).after
    '[REDACTED]'
    >>> redact_repair(Repair("E3.2", ("argument", "Token"), "Token", "token")).after
    'token'
    """
    r = _Redactor(names, secrets)
    renamed = repair.code.startswith(("E2", "E3")) and (
        repair.before == (repair.location[-1] if repair.location else None)
    )
    if renamed or repair.location[:1] == ("api",):
        before, after = r.value(repair.before), r.value(repair.after)
    elif repair.location and r.name(repair.location[-1]):
        before = REDACTED if repair.before is not None else None
        after = REDACTED if repair.after is not None else None
    else:
        before, after = r.value(repair.before), r.value(repair.after)
    if (before, after) == (repair.before, repair.after):
        return repair
    return dataclasses.replace(repair, before=before, after=after)


#: the JSON scalars that hold no credential name nor URL: left at once, before the costlier
#: checks for a mapping (a record's arguments are mostly these)
_PLAIN = frozenset({int, float, bool, type(None)})


def _walk_secrets(value: Any, r: _Redactor, out: list[str], depth: int = 0) -> None:
    kind = type(value)
    if depth > _MAX_DEPTH or len(out) > 256 or kind in _PLAIN:
        return
    if kind is str or isinstance(value, str):
        # a URL's user info and query token; a relative one's query too (/items?key=...)
        if (
            ("?" in value or "@" in value)
            and ("://" in value or value[:1] == "/")
            and len(value) <= 65536
        ):
            out.extend(url_secrets(value, r.names))
        return
    # exact dicts and lists first: the Mapping ABC check is the slow one
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        for k, v in value.items():
            if r.name(k):
                _leaves(v, out)
            elif type(v) not in _PLAIN:
                _walk_secrets(v, r, out, depth + 1)
    elif kind is list or isinstance(value, (list, tuple)):
        for v in value:
            if type(v) not in _PLAIN:
                _walk_secrets(v, r, out, depth + 1)


def credential_values(value: str) -> list[str]:
    """Every piece of a credential value that may be echoed on its own elsewhere: the
    value, the credential after its scheme word (``Bearer``, ``token``...), the
    ``user:password`` and password of a ``Basic`` one, each cookie's value
    (``Cookie: a=1; sid=XYZ``, ``Set-Cookie: sid=XYZ; Path=/``). The one place that
    says what a credential value holds, so each is registered once and masked everywhere.

    >>> credential_values("Basic YWxpY2U6aHVudGVyMg==")
    ['Basic YWxpY2U6aHVudGVyMg==', 'YWxpY2U6aHVudGVyMg==', 'alice:hunter2', 'hunter2']
    >>> credential_values("lang=en; sid=XYZ123")
    ['lang=en; sid=XYZ123', 'XYZ123']
    """
    out = [value]
    words = value.split()
    if len(words) == 2 and "=" not in words[0]:  # "<scheme> <credential>"
        out.append(words[1])
        if words[0].lower() == "basic":
            try:
                decoded = base64.b64decode(words[1], validate=True).decode("utf-8")
            except (binascii.Error, ValueError, UnicodeDecodeError):
                decoded = ""
            if ":" in decoded:
                out += [decoded, decoded.split(":", 1)[1]]
    if "=" in value:  # cookies: name=value pairs, attributes after them
        for pair in value.split(";"):
            name, eq, item = pair.partition("=")
            if eq and name.strip().lower() not in _COOKIE_ATTRIBUTES:
                out.append(item.strip().strip('"'))
    # each once, in order (a set, not a scan of those before: 80,000 cookies in a 1 MB
    # header were 3 billion comparisons)
    return [v for v in dict.fromkeys(out) if len(v) >= _MIN_SECRET]


_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "priority", "partitioned"}
)


def _leaves(value: Any, out: list[str], depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(value, str):
        out.extend(credential_values(value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(str(value))
    elif isinstance(value, Mapping):
        for v in value.values():
            _leaves(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out, depth + 1)


def value_secrets(value: Any, names: Iterable[str] = ()) -> list[str]:
    """The credential values held under sensitive names anywhere in JSON-like ``value``
    (a log record's ``request``: its headers, query, body), and in the URLs it holds
    (user info, sensitive query parameters).

    >>> value_secrets({"headers": {"Cookie": "sid=XYZ123"}, "params": {"q": "dune"}})
    ['sid=XYZ123', 'XYZ123']
    """
    out: list[str] = []
    _walk_secrets(value, _Redactor(names, ()), out)
    return out


def url_secrets(url: str, names: Iterable[str] = ()) -> list[str]:
    """The credential values a URL carries: user info and sensitive query values."""
    r = _Redactor(names, ())
    out: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            out.append(parts.password)
        if parts.username and parts.password is not None:
            out.append(parts.username)
        for k, v in parse_qsl(parts.query, keep_blank_values=True):
            if r.name(k):
                out.append(v)
    except ValueError:
        pass
    userinfo = url.split("://", 1)[-1].split("/", 1)[0]
    if "@" in userinfo:
        out.append(userinfo.rsplit("@", 1)[0])
    return out


def request_secrets(request: ApiRequest, names: Iterable[str] = ()) -> list[str]:
    """Every credential value ``request`` carries (headers, query, body fields, URL user
    info), to mask wherever it is echoed.

    >>> from autofeedback.core._model import ApiRequest
    >>> request_secrets(ApiRequest(method="GET", url="http://u:pw12@h/x?token=t0k3n"))
    ['pw12', 't0k3n', 'u:pw12']
    """
    names = list(names)
    r = _Redactor(names, ())
    out: list[str] = []
    if isinstance(request.url, str):
        out += url_secrets(request.url, names)
    _walk_secrets(request.headers, r, out)
    _walk_secrets(request.params, r, out)
    _walk_secrets(request.arguments, r, out)
    _walk_secrets(request.body, r, out)
    seen = dict.fromkeys(s for s in out if len(s) >= _MIN_SECRET and s != REDACTED)
    return sorted(seen, key=lambda s: (s.count(":"), s))


def auth_names(catalog: Iterable[Any]) -> frozenset[str]:
    """The credential names a spec declares (its ``securitySchemes``: API-key headers,
    query parameters and cookies), for :func:`redact`'s ``names``."""
    return frozenset(p.name.lower() for op in catalog for p in getattr(op, "auth_parameters", ()))
