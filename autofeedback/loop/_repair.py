"""The corrected call: every fix the static findings name, applied to the model's request.

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
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from autofeedback._findings import Finding
from autofeedback._model import ApiRequest, Operation
from autofeedback._parse._native import render_call
from autofeedback._resolve import request_args
from autofeedback.checks._check_name import check_name

if TYPE_CHECKING:
    from autofeedback._scan import Scanner

__all__ = ["Hole", "corrected_call"]

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
    return f.location[-1] if len(f.location) >= 2 else None


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
        elif family == "E4" and param in where and not isinstance(where[param][1], Hole):
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
            and not (f.code.startswith("E4") and _param(f) in holes)
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
