"""The dynamic analysis' explanation step: turn a server error into a documentation query
and retrieve what the docs say about it (the paper's Figure 6), then say what to do next.

Servers often answer with terse bodies (``{"info_code": 20000}``); the query is the status
with its reason phrase plus the code and message fields found in the body, and the search
is restricted to the called operation's docs plus the API-independent ones.

Given the operation and the request that was sent, the explanation also says

* **the documented cause** of the code: the operation's own error response for that
  code (``409: info_code 20031: the order has already shipped``), else for that status,
  else the retrieved line that carries the code (an error-code page);
* **the part of the request it concerns**: the parameter the cause names, else each
  value that breaks a rule its description states (``Format: %Y-%m-%d``, see
  :mod:`autofeedback.serve._doc_rules`), else for a state or not-found error the id in the
  path, else for a duplicate the field that must be unique;
* **the call that would resolve it**, where the docs name one: an operation the cause
  names, else for a resource in the wrong state its read (``getOrder``: read the
  order's status first), for a duplicate or a missing id the list of its collection
  (see the names taken, or the ids there are). Only operations without side effects
  (:func:`~autofeedback.checks._words.no_side_effects`) are suggested.

What it cannot know: a cause the docs do not state (an expired token, another user's
resource, a rule no description holds) is explained only as far as the code's own
documentation goes, and nothing is said to concern a value the docs give no rule for.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.serve._doc_rules import broken_rules, operation_rules

if TYPE_CHECKING:  # faiss is imported where an index is built, not to explain with one
    from doc_index import DocIndex, Hit

__all__ = ["Concern", "Explanation", "NextCall", "explain_response"]

#: Bodies are read up to this many bytes: an error explanation sits at the top, and a
#: server that answers with megabytes must not cost megabytes of parsing.
MAX_BODY_BYTES = 64 * 1024
#: A non-JSON body contributes at most this many characters to the query.
MAX_EXCERPT_CHARS = 300

# Field names that carry an error's code or message, in the order they are reported.
_FIELDS = (
    "code",
    "error_code",
    "errorcode",
    "info_code",
    "status_code",
    "status",
    "error",
    "type",
    "title",
    "reason",
    "message",
    "msg",
    "status_message",
    "error_message",
    "error_description",
    "detail",
    "details",
    "description",
    "info",
    "errors",
)
_FIELD_SET = frozenset(_FIELDS)
_MAX_DEPTH = 4
_MAX_PARTS = 12

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Concern:
    """A part of the refused request the error concerns: ``location`` (``("body",
    "time")``), the value sent, and what the docs say about it."""

    location: tuple[str, ...]
    got: Any
    says: str
    #: how the docs write a good value, where a rule says (``YYYY-MM-DD``)
    shape: str | None = None
    #: the request left this required parameter out (``got`` is ``None``)
    missing: bool = False

    def __str__(self) -> str:
        if self.missing:
            return f"{'.'.join(self.location)} is missing; the docs require it: {self.says}"
        got = json.dumps(self.got, ensure_ascii=False, default=str)
        if len(got) > 100:
            got = got[:100] + "..."
        text = f"{'.'.join(self.location)} = {got}: the docs say: {self.says.rstrip('. ')}"
        return text + (f" (write it as {self.shape})" if self.shape else "")


@dataclass(frozen=True)
class NextCall:
    """The call that would resolve the error, from the docs: ``operation`` with
    ``arguments`` (the refused request's values where they carry over), and why."""

    operation: str
    arguments: tuple[tuple[str, Any], ...]
    why: str

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments)
        return f"{self.operation}({args})"


@dataclass(frozen=True)
class Explanation:
    """What the documentation says about one server error.

    ``query`` is what was searched, ``hits`` what was found (best first) and ``text`` the
    hits' chunks joined, one per line, ready to put into feedback (empty when nothing
    was found). With the operation and the request known (see :func:`explain_response`):
    ``cause`` the documented cause of the code, ``concerns`` the parts of the request it
    concerns, ``next_call`` the call the docs name to resolve it (``None``: none).
    """

    query: str
    hits: tuple[Hit, ...]
    text: str
    status: int | None = None
    cause: str = ""
    concerns: tuple[Concern, ...] = ()
    next_call: NextCall | None = None

    def lines(self) -> list[str]:
        """The explanation as feedback lines: the documented cause, what it concerns,
        the next call (what the retrieved text says, when nothing more is known)."""
        out = [f"Documentation about this error: {self.cause or self.text}".rstrip()]
        if not self.cause and not self.text:
            out = []
        if self.concerns:
            shown = "; ".join(str(c).rstrip(". ") for c in self.concerns[:4])
            out.append(f"It concerns: {shown}.")
        if self.next_call is not None:
            out.append(
                f"Next call: {self.next_call} {self.next_call.why}; it changes nothing, "
                "so make it first."
            )
        elif self.concerns and all(c.missing for c in self.concerns):
            out.append("Add them, with the values the user's request gives, and send it again.")
        elif self.concerns:
            out.append("Correct these values and send the request again.")
        return out

    def observation(self, body: str = "") -> str:
        """A ReAct ``Observation`` of the refused call: the answer, then the lines."""
        head = f"Observation: HTTP {self.status if self.status is not None else '?'} {body}"
        return "\n".join([head.rstrip(), *self.lines()])

    def tool_message(self, call_id: str, body: str = "") -> dict[str, Any]:
        """The OpenAI Chat tool message answering the refused tool call ``call_id``."""
        text = f"Error: HTTP {self.status} {body}".rstrip()
        return {
            "role": "tool",
            "tool_call_id": call_id,
            "content": "\n".join([text, *self.lines()]),
        }

    def mcp_result(self, body: str = "") -> dict[str, Any]:
        """An MCP ``tools/call`` result (``isError``) carrying the explanation."""
        text = f"HTTP {self.status} {body}".rstrip()
        return {
            "content": [{"type": "text", "text": "\n".join([text, *self.lines()])}],
            "isError": True,
        }


def explain_response(
    index: DocIndex | None,
    operation: str | Operation | None,
    status: int,
    body: str | bytes | None,
    *,
    k: int = 3,
    request: ApiRequest | Mapping[str, Any] | None = None,
    catalog: ApiCatalog | None = None,
) -> Explanation:
    """Retrieve the documentation that explains a ``status`` response with ``body`` from
    ``operation`` (``None``, or an operation the index does not know: search all docs).

    Given the :class:`~autofeedback.core._model.Operation` itself, the ``request`` that was
    sent (an :class:`~autofeedback.ApiRequest`, or its arguments by name) and the
    ``catalog``, the explanation also carries the documented cause, the parts of the
    request it concerns and the next call (see the module docstring). With no ``index``
    nothing is retrieved: the cause comes from the operation's own docs, and where they
    document none, the error's own words say which kind of part to look for.

    >>> e = explain_response(index, "get_history", 400, b'{"info_code": 20000}')  # doctest: +SKIP
    >>> e.query                                                                     # doctest: +SKIP
    '400 Bad Request info_code 20000'
    >>> e.text                                                                      # doctest: +SKIP
    '400: info_code 20000: the parameter `date` must be YYYY-MM-DD.'
    """
    op = operation if isinstance(operation, Operation) else None
    name = op.name if op is not None else operation
    query = error_query(status, body)
    hits: tuple[Hit, ...] = ()
    if index is not None:
        api = name if isinstance(name, str) and name in index.apis else None
        hits = tuple(index.search(query, api=api, k=k))
    text = "\n".join(hit.chunk.text for hit in hits)
    code = _code(body)
    cause = _cause(op, status, code, hits)
    if op is None:
        return Explanation(query, hits, text, status, cause)
    values = _values(op, request)
    concerns = _concerns(op, status, cause or _excerpt(_body_text(body)), values)
    next_call = _next_call(op, status, cause, values, catalog) if catalog is not None else None
    return Explanation(query, hits, text, status, cause, concerns, next_call)


# -- the documented cause ---------------------------------------------------------------

_CODE_IN_TEXT = re.compile(
    r"\b(?:info[_ ]?code|error[_ ]?code|code)\b\s*[:=#]?\s*(\d{3,6})\b", re.IGNORECASE
)
_CODE_KEYS = ("info_code", "error_code", "code", "errorcode", "status_code")


def _code(body: str | bytes | None) -> str | None:
    """The machine code a terse error body carries (``{"info_code": 20031}``)."""
    text = _body_text(body)
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    node = doc.get("error") if isinstance(doc, dict) and isinstance(doc.get("error"), dict) else doc
    if not isinstance(node, dict):
        return None
    for key in _CODE_KEYS:
        value = node.get(key)
        if isinstance(value, int | str) and not isinstance(value, bool) and str(value).isdigit():
            return str(value)
    return None


def _cause(op: Operation | None, status: int, code: str | None, hits: tuple[Hit, ...]) -> str:
    """The documented cause of ``code`` (else of ``status``): the operation's own error
    response first, else the retrieved line that carries the code."""
    if op is not None:
        same_status = [r for r in op.error_responses if r.status == str(status)]
        for response in op.error_responses:
            matches = list(_CODE_IN_TEXT.finditer(response.description or ""))
            for i, m in enumerate(matches):
                if code is not None and m.group(1) == code:
                    end = matches[i + 1].start() if i + 1 < len(matches) else None
                    line = response.description[m.start() : end]
                    return f"{response.status}: " + " ".join(line.split()).rstrip(" -;")
        if same_status and (code is None or not any(code in h.chunk.text for h in hits)):
            described = " ".join((same_status[0].description or "").split())
            if described:
                return f"{status}: {described[:400]}"
    if code is not None:
        for hit in hits:
            for line in hit.chunk.text.splitlines():
                if re.search(rf"(?<!\d){code}(?!\d)", line) and len(line) > len(code) + 12:
                    return " ".join(line.split())[:400]
    return ""


# -- what it concerns -------------------------------------------------------------------

_STATE_WORDS = re.compile(
    r"\balready\b|\bstate\b|\bstatus\b|\bcannot be\b|\bno longer\b|\bin use\b", re.I
)
_DUPLICATE_WORDS = re.compile(
    r"already (?:exists?|taken|in use|registered|used)|duplicate|must be unique|not unique"
    r"|unique field|is taken",
    re.I,
)
_MISSING_WORDS = re.compile(r"\bno \w+ has\b|\bnot found\b|\bdoes not exist\b|\bno such\b", re.I)


def _values(
    op: Operation, request: ApiRequest | Mapping[str, Any] | None
) -> dict[tuple[str, str], Any]:
    """The request's values by ``(location, name)`` (a function's arguments as
    ``("argument", name)``)."""
    if request is None:
        return {}
    if not isinstance(request, ApiRequest):
        return {("argument", str(k)): v for k, v in request.items()} | {
            (p.location, p.name): request[p.name] for p in op.parameters if p.name in request
        }
    from autofeedback.core._resolve import request_args

    path_params = _path_values(op, request.url) if request.is_http else None
    out: dict[tuple[str, str], Any] = {}
    for arg in request_args(request, path_params):
        out.setdefault((arg.location, arg.name), arg.value)
        documented = op.parameter(arg.name)
        if documented is not None:
            # a function's argument is its parameter wherever it travels
            out.setdefault((documented.location, arg.name), arg.value)
    return out


def _path_values(op: Operation, url: str | None) -> dict[str, str] | None:
    """The path parameters of ``url`` read with ``op``'s path template (any prefix and
    host before it: the server the request went to need not be a documented one)."""
    if not op.path or not url:
        return None
    from urllib.parse import unquote, urlsplit

    names: list[str] = []
    pattern = ""
    for segment in [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]:
        part, pos = "", 0
        for m in re.finditer(r"\{([^{}/]+)\}", segment):
            part += re.escape(segment[pos : m.start()]) + "([^/]+)"
            names.append(m.group(1))
            pos = m.end()
        pattern += "/" + part + re.escape(segment[pos:])
    found = re.search(pattern + "/?$", urlsplit(url).path)
    if found is None:
        return None
    return {name: unquote(value) for name, value in zip(names, found.groups(), strict=True)}


def _concerns(
    op: Operation, status: int, cause: str, values: Mapping[tuple[str, str], Any]
) -> tuple[Concern, ...]:
    out: list[Concern] = []
    seen: set[tuple[str, str]] = set()
    # the parameter the documented cause names (`quantity` must be ...)
    for p in op.parameters:
        key = (p.location, p.name)
        if key in values and _names(cause, p.name) and key not in seen:
            seen.add(key)
            out.append(Concern(_where(p.location, p.name), values[key], cause))
    if out:
        return tuple(out)
    # each value that breaks a rule its description states
    for rule, value in broken_rules(operation_rules(op), values):
        out.append(Concern(_where(rule.location, rule.parameter), value, rule.says, rule.shape))
    if out:
        return tuple(out)
    # the request read against its schema, where the cause's words point (a terse
    # "a required parameter is missing" says which kind of part, not which part)
    out = _schema_concerns(op, cause, values)
    if out:
        return tuple(out)
    state = status in (404, 409, 410, 412, 422, 423) or _STATE_WORDS.search(cause)
    if _DUPLICATE_WORDS.search(cause) or (status == 409 and not _path_ids(op, values)):
        for p in op.parameters:
            key = (p.location, p.name)
            unique = re.search(r"\bunique\b", p.description or "", re.I) and not re.search(
                r"not (?:need to )?be unique", p.description or "", re.I
            )
            if key in values and (unique or p.name.lower() in ("name", "title", "email")):
                out.append(Concern(_where(*key), values[key], p.description or cause))
        if out:
            return tuple(out)
    if state or _MISSING_WORDS.search(cause):
        ids = _path_ids(op, values)
        for p in ids[-1:]:
            out.append(Concern(("path", p.name), values[("path", p.name)], p.description or cause))
    return tuple(out)


_REQUIRED_WORDS = re.compile(r"\bmissing\b|\bis required\b|\brequired (?:parameter|field)", re.I)
_UNKNOWN_WORDS = re.compile(
    r"\bunknown\b|\bnot document|\bundocumented\b|\bmisspel|\binvented\b|\bunexpected\b"
    r"|\bnot accepted\b|\bare accepted\b",
    re.I,
)
_TYPE_WORDS = re.compile(
    r"\bwrong type\b|\bof the wrong type\b|\bhas the wrong type\b"
    r"|\bmust be an? (?:integer|number|boolean|string|array|object)\b",
    re.I,
)
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


def _schema_concerns(
    op: Operation, cause: str, values: Mapping[tuple[str, str], Any]
) -> list[Concern]:
    """The parts a schema-level refusal concerns: the required parameters left out, the
    names the docs do not have, the values of another JSON type."""
    out: list[Concern] = []

    def given(p: Any) -> bool:
        return (p.location, p.name) in values or ("argument", p.name) in values

    if _REQUIRED_WORDS.search(cause):
        for p in op.parameters:
            if p.required and p.location != "header" and not given(p):
                says = (p.description or "").strip() or "this parameter is required"
                out.append(Concern(_where(p.location, p.name), None, says, missing=True))
    if _UNKNOWN_WORDS.search(cause):
        known = {p.name for p in (*op.parameters, *op.auth_parameters)}
        names = ", ".join(p.name for p in op.parameters if p.location != "header")
        for (location, name), value in values.items():
            if location in ("query", "body", "argument") and name not in known:
                out.append(
                    Concern(
                        (location, name), value, f"it is not documented; the documented: {names}"
                    )
                )
    if _TYPE_WORDS.search(cause):
        for p in op.parameters:
            key = (p.location, p.name) if (p.location, p.name) in values else ("argument", p.name)
            if p.location in ("query", "path", "header") or key not in values:
                continue  # text on the wire: its type is read, not sent
            kinds = p.schema.get("type") if isinstance(p.schema, Mapping) else None
            kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
            allowed = tuple(t for k in kinds for t in _JSON_TYPES.get(k, ()))
            value = values[key]
            wrong = bool(allowed) and (
                not isinstance(value, allowed)
                or (isinstance(value, bool) and "boolean" not in kinds)
            )
            if wrong:
                says = f"{(p.description or '').strip()} (type {'/'.join(kinds)})".strip()
                out.append(Concern(_where(p.location, p.name), value, says))
    return out


def _path_ids(op: Operation, values: Mapping[tuple[str, str], Any]) -> list[Any]:
    from autofeedback.serve._sandbox_store import id_params

    names = {i.name for i in id_params(op)}
    return [
        p
        for p in op.parameters
        if p.location == "path" and p.name in names and ("path", p.name) in values
    ]


def _where(location: str, name: str) -> tuple[str, ...]:
    return (location, name)


def _names(text: str, name: str) -> bool:
    """Whether ``text`` names the parameter ``name`` (in backticks, or as a word when
    the name cannot be an ordinary word: ``new_password``, ``bookId``)."""
    if f"`{name}`" in text or f"'{name}'" in text:
        return True
    plain = name.isalpha() and name.islower()
    return not plain and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


# -- the next call ------------------------------------------------------------------------


def _next_call(
    op: Operation,
    status: int,
    cause: str,
    values: Mapping[tuple[str, str], Any],
    catalog: ApiCatalog,
) -> NextCall | None:
    """The side-effect-free call that would resolve the error, where the docs name one."""
    from autofeedback.checks._words import no_side_effects

    safe = [o for o in catalog.operations if o.name != op.name and no_side_effects(o)]
    # an operation the documented cause names
    for other in safe:
        if _names(cause, other.name) or (
            other.path and re.search(rf"{re.escape(other.path)}(?![\w/{{])", cause)
        ):
            return _call(other, values, "as the documentation of this error says")
    if not op.path:
        return None
    ids = _path_ids(op, values)
    duplicate = _DUPLICATE_WORDS.search(cause) is not None
    state = status in (409, 410, 412, 423) or (
        _STATE_WORDS.search(cause) is not None and status != 404
    )
    segments = [s for s in op.path.split("?", 1)[0].strip("/").split("/") if s]
    if ids and state and not duplicate:
        # the resource in the wrong state: read it first (its status, its fields)
        token = "{" + ids[-1].name + "}"
        detail = _template(segments[: segments.index(token) + 1])
        reader = _on(safe, detail)
        if reader is not None:
            kind = _kind(segments, token)
            return _call(reader, values, f"reads the {kind} first (its status, what it allows)")
    if duplicate or (status == 409 and not ids) or (status == 404 and ids):
        # the collection: the values taken, or the ids there are
        if ids:
            token = "{" + ids[-1].name + "}"
            where = segments[: segments.index(token)]
        else:
            where = segments
        lister = _on(safe, _template(where))
        if lister is not None:
            what = (
                "lists what exists, so you can choose a value no other one has"
                if duplicate or status == 409
                else "lists the ids that exist"
            )
            return _call(lister, values, what)
    return None


def _template(segments: list[str]) -> str:
    return "/" + "/".join(re.sub(r"\{[^{}/]+\}", "{}", s) for s in segments)


def _on(ops: list[Operation], template: str) -> Operation | None:
    for other in ops:
        if (
            other.path
            and _template([s for s in other.path.split("?", 1)[0].strip("/").split("/") if s])
            == template
            and (other.method or "").upper() == "GET"
        ):
            return other
    return None


def _kind(segments: list[str], token: str) -> str:
    at = segments.index(token)
    if at == 0:
        return "resource"
    from autofeedback.serve._sandbox_store import singular

    return singular(segments[at - 1])


def _call(other: Operation, values: Mapping[tuple[str, str], Any], why: str) -> NextCall:
    """``other`` called with the refused request's values of the parameters it takes
    (the order's id), the required ones it has no value for left out."""
    args = []
    for p in other.parameters:
        for key in ((p.location, p.name), ("path", p.name), ("argument", p.name)):
            if key in values:
                args.append((p.name, values[key]))
                break
    return NextCall(other.name, tuple(args), why)


def error_query(status: int, body: str | bytes | None) -> str:
    """The search query for a server error: status, reason phrase and the body's
    code/message fields (or a short excerpt of a non-JSON body).

    >>> error_query(429, '{"error": {"status": 429, "message": "API rate limit exceeded"}}')
    '429 Too Many Requests error status 429 error message API rate limit exceeded'
    """
    parts = [str(status)]
    # a non-standard status (e.g. 499) has no phrase; the number is enough
    with contextlib.suppress(ValueError):
        parts.append(HTTPStatus(status).phrase)
    text = _body_text(body)
    if text:
        fields = _json_fields(text)
        parts.append(" ".join(fields) if fields is not None else _excerpt(text))
    return " ".join(p for p in parts if p)


def _body_text(body: str | bytes | None) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body[:MAX_BODY_BYTES]).decode("utf-8", errors="replace")
    return str(body)[:MAX_BODY_BYTES]


def _json_fields(text: str) -> list[str] | None:
    """``"key value"`` for every code/message field of a JSON body, or ``None`` when the
    body is not a JSON object or array (a cut-off body is not JSON either)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict | list):
        return [_scalar(doc)] if doc is not None else []
    found = list(_walk(doc, "", 0))
    if not found:
        # a JSON error with unconventional field names: its scalars are all there is
        found = [f"{key} {value}".strip() for key, value in _scalars(doc, "", 0)]
    return found[:_MAX_PARTS]


def _walk(node: Any, prefix: str, depth: int) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list):
        for item in node[:3]:
            yield from _walk(item, prefix, depth + 1)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        name = str(key)
        label = f"{prefix} {name}".strip()
        if name.lower() in _FIELD_SET and _is_scalar(value):
            yield f"{label} {_scalar(value)}"
        elif isinstance(value, dict | list):
            yield from _walk(value, label if name.lower() in _FIELD_SET else prefix, depth + 1)


def _scalars(node: Any, prefix: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _scalars(value, str(key), depth + 1)
    elif isinstance(node, list):
        for item in node[:3]:
            yield from _scalars(item, prefix, depth + 1)
    elif node is not None:
        yield prefix, _scalar(node)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else json.dumps(value)
    return _SPACE.sub(" ", text).strip()[:MAX_EXCERPT_CHARS]


def _excerpt(text: str) -> str:
    plain = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    if len(plain) <= MAX_EXCERPT_CHARS:
        return plain
    return plain[:MAX_EXCERPT_CHARS].rsplit(" ", 1)[0]
