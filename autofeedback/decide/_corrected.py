"""The corrected call: every fix the static findings name, applied to the model's request,
and the Action a ReAct run is told to write instead of a rejected call.

The feedback text says what is wrong one finding at a time; a small model then has to
carry each correction into a new request itself, and often carries only the first. The
corrected call does that work: the API name the findings suggest, parameters renamed or
removed as they say, required ones added, and the request checked again after each
round (a corrected API name has its own parameters to check). What the documentation
cannot supply, a value the user's request holds, is left as a typed hole (``<integer>``)
for the model to fill.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from autofeedback._parse._native import render_call
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import check_name, name_with_values
from autofeedback.checks._names import other_entities
from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._resolve import request_args
from autofeedback.decide._repairs import one_letter_off

if TYPE_CHECKING:
    from autofeedback.scanner._scan import Scanner

__all__ = ["MAX_ARGUMENTS", "Hole", "call_text", "corrected_call", "next_action", "sure_fix"]

#: A stand-in of each JSON type, for checking a call whose holes are still open.
_STAND_IN: dict[str, Any] = {
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
    "string": "x",
}


#: A call with more arguments gets no corrected copy: it would be longer than what a
#: model can use, and re-checking it each round costs seconds (300,000 keys: 15 s).
MAX_ARGUMENTS = 256


class Hole:
    """A value only the user's request can supply, shown as ``<type>``."""

    __slots__ = ("type",)

    def __init__(self, type_: str) -> None:
        self.type = type_

    def __repr__(self) -> str:
        return f"<{self.type}>"


def _type_of(op: Operation | None, param: str) -> str:
    p = op.parameter(param) if op is not None else None
    if p is not None:
        t = p.schema.get("type")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        if isinstance(t, str):
            return t
    return "value"


def _as_call(request: ApiRequest, scanner: Scanner) -> tuple[str, dict[str, Any]] | None:
    if not request.is_http:
        return (request.name, dict(request.arguments)) if request.name else None
    named = check_name(request, scanner.catalog)
    if named.operation is None:
        return None
    args = {a.name: a.value for a in request_args(request, named.path_params)}
    return named.operation.name, args


def _param(f: Finding) -> str | None:
    """The parameter a finding lies in: ``paging`` for a value inside it
    (``("argument", "paging", "limit")``), never a parameter named as the inner key."""
    return f.location[1] if len(f.location) >= 2 else None


def _apply(
    name: str, args: dict[str, Any], errors: Iterable[Finding], scanner: Scanner
) -> tuple[str, bool] | None:
    """Apply what ``errors`` say to ``args`` in place; the (possibly new) API name and
    whether anything changed, or ``None`` when a finding names no fix."""
    # Each argument is a [name, value] cell, found by name, renamed or dropped in place
    # and written back once: rebuilding the whole dict per renamed key made a call with
    # 4,000 unknown keys quadratic (8 s; 300,000 froze the proxy for minutes).
    cells = [[k, v] for k, v in args.items()]
    where: dict[str, list[Any]] = {k: cell for k, cell in zip(args, cells, strict=True)}

    def done() -> None:
        args.clear()
        args.update((k, v) for k, v in cells if k is not None)

    changed = False
    for f in errors:
        family = f.code.split(".")[0]
        if family == "E1":
            return None
        if family == "E2":
            if not f.suggestion or scanner.catalog.get(f.suggestion) is None:
                return None
            # the new API's own parameters are checked on the next round
            done()
            return f.suggestion, True
        op = scanner.catalog.get(name)
        param = _param(f)
        if param is None:
            continue
        if f.code == "E3.4":
            wanted = f.suggestion or param
            if wanted not in where:
                cell = [wanted, Hole(_type_of(op, wanted))]
                cells.append(cell)
                where[wanted] = cell
                changed = True
        elif family == "E3" and param in where:
            new = f.suggestion if f.suggestion and f.suggestion not in where else None
            # renamed where it stood, so the model sees its own call, corrected
            cell = where.pop(param)
            cell[0] = new
            if new is not None:
                where[new] = cell
            changed = True
        elif family in ("E4", "E5") and param in where and not isinstance(where[param][1], Hole):
            # a wrong value, or a made-up one or a placeholder (E5.3: the scanner reports
            # a placeholder's type error as that): a hole the model fills
            where[param][1] = Hole(_type_of(op, param))
            changed = True
    done()
    return name, changed


def corrected_call(
    scanner: Scanner,
    request: ApiRequest | None,
    findings: Iterable[Finding],
    *,
    instruction: str | None = None,
    rounds: int = 3,
    style: Literal["api", "json"] = "api",
) -> str | None:
    """The request with every fix the error ``findings`` name, as an ``<API>`` call with
    typed holes, or ``None`` when the findings leave the API unknown (E1, an E2 without a
    suggestion) or name nothing to change.

    ``style="json"`` writes it as ``{"name": ..., "arguments": {...}}`` instead, for a
    model that called the tool natively (holes stay ``"<type>"`` strings).

    ``instruction`` is what the request must do (the E2.1 check of each round compares
    APIs with it).
    """
    if request is None:
        return None
    start = _as_call(request, scanner)
    if start is None:
        return None
    name, args = start
    if len(args) > MAX_ARGUMENTS:
        return None
    errors = [f for f in findings if f.severity == "error"]
    touched = False
    for _ in range(rounds):
        if not errors:
            break
        applied = _apply(name, args, errors, scanner)
        if applied is None:
            return None
        name, changed = applied
        if not changed:
            break
        touched = True
        stand_in = {
            k: _STAND_IN.get(v.type, "x") if isinstance(v, Hole) else v for k, v in args.items()
        }
        holes = {k for k, v in args.items() if isinstance(v, Hole)}
        errors = [
            f
            for f in scanner.check_request(
                ApiRequest(name=name, arguments=stand_in), instruction=instruction
            )
            if f.severity == "error"
            and not (f.code.startswith(("E4", "E5")) and _param(f) in holes)
            # the API was chosen by the first round's findings; a second opinion on the
            # choice (E2.1 is the scanner's least certain check) would only flip it
            and f.code != "E2.1"
        ]
    if not touched:
        return None
    if style == "json":
        shown = {k: repr(v) if isinstance(v, Hole) else v for k, v in args.items()}
        return json.dumps({"name": name, "arguments": shown}, ensure_ascii=False, default=str)
    return _render(name, args)


def _render(name: str, args: Mapping[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        if isinstance(value, Hole):
            parts.append(f"{key}={value!r}")
        else:
            one = render_call("_", {key: value})
            parts.append(one[len("<API>_(") : -len(")</API>")])
    return f"<API>{name}({', '.join(parts)})</API>"


# -- the Action a ReAct run is told to write instead ---------------------------------

_FIRST = re.compile(r"^call (\S+) first\b")


def next_action(
    errors: Sequence[Finding],
    request: ApiRequest | None,
    catalog: ApiCatalog,
    producers: Callable[[str, str], list[Any]] | None = None,
    made: Iterable[str | None] = (),
) -> str | None:
    """The Action to write instead of a rejected call, where the findings say it, with
    the values the model must supply left as ``...``:

    * the call that produces a made-up value (E5.3's "call X first"), or a missing
      required identifier (E3.4), where no producer of it has been called yet (where
      one has, the call itself with that value left to fill in from its Observation);
    * else the call with its sure fixes: a name spelled as documented (E2.2, E3.2, an
      API name one letter off), an unknown parameter renamed to the missing required
      one it is closest to (E3.3 with E3.4), a parameter the API does not take dropped
      (E3, E3.1), a missing required parameter added.

    ``None`` where the findings leave the call to the model.

    >>> from autofeedback import Operation, Parameter
    >>> q = Parameter("q", "query", required=True)
    >>> cat = ApiCatalog([Operation("searchBooks", parameters=(q,))])
    >>> next_action([Finding("E2.2", ("name",), "search_books", suggestion="searchBooks")],
    ...     ApiRequest(name="search_books", arguments={"q": "Dune"}), cat)
    "<API>searchBooks(q='Dune')</API>"
    """
    if request is None or not request.name or not errors:
        return None
    called = {n for n in made if n}
    available: set[str] = set()  # parameters whose value an Observation already holds
    for f in errors:
        if f.code not in ("E5.3", "E3.4") or not f.location:
            continue
        first = _FIRST.match(f.suggestion or "") if f.code == "E5.3" else None
        producer = catalog.get(first.group(1)) if first else None
        found = []
        if producers is not None and f.operation:
            found = [p for p in producers(f.operation, f.location[-1]) if p.via != "weak"]
        if f.code == "E3.4":
            producer = catalog.get(found[0].operation) if found else None
        if any(p.operation in called for p in found) or (producer and producer.name in called):
            available.add(f.location[-1])  # a producer was called: take it from there
            continue
        if producer is not None:
            needed = ", ".join(f"{p.name}=..." for p in producer.parameters if p.required)
            return f"<API>{producer.name}({needed})</API>"
    name, arguments = request.name, dict(request.arguments)
    # an unknown parameter whose closest documented one is the required one missing
    # (``id=34`` where ``company_id`` is missing) is a sure rename, whatever its code
    missing = [f.location[-1] for f in errors if f.code == "E3.4" and f.location]
    for f in sorted(errors, key=lambda f: f.code == "E3.4"):  # renames before additions
        fix = f.suggestion
        if f.code == "E3.4" and f.location:
            arguments.setdefault(f.location[-1], ...)
        elif f.code == "E5.3" and f.location and f.location[-1] in available:
            arguments[f.location[-1]] = ...  # made up where an Observation has it
        elif f.code in ("E3", "E3.1") and f.location and f.location[-1] in arguments:
            # a parameter the API does not take (another API's, or nobody's): the call
            # without it, unless it is the missing required one misnamed
            value = arguments.pop(f.location[-1])
            if isinstance(fix, str) and fix in missing and not other_entities(f.location[-1], fix):
                arguments[fix] = value
        elif not isinstance(fix, str) or not fix:
            return None
        elif f.code in ("E3.2", "E3.3") and f.location and f.location[-1] in arguments:
            if f.code == "E3.3" and (fix not in missing or other_entities(f.location[-1], fix)):
                return None
            arguments = {(fix if k == f.location[-1] else k): v for k, v in arguments.items()}
        elif not sure_fix(f, fix):
            return None
        elif f.code.startswith("E2") and f.got == name:
            filled = name_with_values(name, catalog)
            for key, value in (filled[1] if filled is not None else {}).items():
                arguments.setdefault(key, int(value) if value.isdigit() else value)
            name = fix
        else:
            return None
    fixed = ApiRequest(name=name, arguments=arguments)
    return f"<API>{call_text(fixed)}</API>" if fixed != request else None


_METHOD = re.compile(r"^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)_", re.IGNORECASE)


def _method_effect(name: str) -> int:
    """What the HTTP method a function name starts with does (0 read, 1 write, 2 delete;
    1 where the name starts with none)."""
    method = name.split("_", 1)[0].upper()
    return {"GET": 0, "HEAD": 0, "OPTIONS": 0, "DELETE": 2}.get(method, 1)


_SEGMENT = re.compile(r"[A-Za-z_]\w*")


def sure_fix(finding: Finding, suggestion: str) -> bool:
    """Whether the suggestion is a repair rather than a guess, so the line can be shown
    fixed: a spelling (an API name one letter off included) or a method of the same
    path (``PUT_me_player_next`` -> ``POST_me_player_next``), or a response path whose
    fields the model wrote in order but with some left out (``items[].id`` ->
    ``albums.items[].id``). A path that drops fields (``results[].credits.cast[].id`` ->
    ``results[].id``) or another function of a similar name is a guess: only named,
    never written into the line."""
    code, got = finding.code, finding.got
    if code in ("E2.2", "E3.2"):
        return True
    if code == "E2.3" and isinstance(got, str):
        # a keyboard slip inside a word, as written (get-an-artsit-albums): the
        # decision's own test (never another word, nor a singular for a plural)
        return one_letter_off(got, [suggestion]) == suggestion
    if code == "E2" and isinstance(got, str):
        # the same path under another method, where that method does no more (PUT for
        # POST; never GET for POST, nor anything for DELETE)
        if _METHOD.sub("", got).lower() != _METHOD.sub("", suggestion).lower():
            return False
        return _method_effect(suggestion) <= _method_effect(got)
    if code == "E5.2" and isinstance(got, str):
        written = _SEGMENT.findall(got)[1:]  # the fields after the variable
        wanted = _SEGMENT.findall(suggestion)
        if not written or not wanted or written[-1] != wanted[-1] or len(wanted) <= len(written):
            return False
        rest = iter(wanted)
        return all(any(w == x for x in rest) for w in written)
    return False


def call_text(request: ApiRequest) -> str:
    args = ", ".join(f"{k}={'...' if v is ... else repr(v)}" for k, v in request.arguments.items())
    return f"{request.name}({args})" if request.name else str(request.raw or "")
