"""E3: are the parameter names documented for the API, and sent where the docs say?

Checked only once the API name is right. An unknown name is, in this order: a literal
variant of a documented parameter (E3.2, the most specific evidence), a parameter of
another API (E3.1), a semantic variant (E3.3), or anything else (E3). Required
parameters that are missing are E3.4 (beyond the paper).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from autofeedback._catalog import ApiCatalog
from autofeedback._findings import Finding
from autofeedback._model import Operation, Parameter
from autofeedback._names import NameMatcher, closest_literal, closest_spelling
from autofeedback._resolve import Arg

__all__ = ["ParamCheck", "check_parameters"]


@dataclass(frozen=True)
class ParamCheck:
    findings: tuple[Finding, ...]
    #: each argument that names a documented parameter, with that parameter
    matched: tuple[tuple[Arg, Parameter], ...]


def _param_doc(p: Parameter) -> str:
    kind = p.schema.get("type", "any") if isinstance(p.schema, Mapping) else "any"
    req = "required" if p.required else "optional"
    text = f"{p.name} ({p.location}, {kind}, {req})"
    return f"{text}: {p.description.strip()}" if p.description.strip() else text


def check_parameters(
    op: Operation,
    args: list[Arg],
    catalog: ApiCatalog,
    *,
    matcher: NameMatcher | None = None,
    threshold: float = 0.5,
) -> ParamCheck:
    findings: list[Finding] = []
    matched: list[tuple[Arg, Parameter]] = []
    params = list(op.parameters)
    auth = {(p.location, p.name.lower()) for p in op.auth_parameters}
    used: set[str] = set()
    # a parameter an unknown name probably meant is not also reported missing
    meant: set[str] = set()
    body_open = _body_allows_extra(op)

    for arg in args:
        if (arg.location, arg.name.lower()) in auth:
            continue
        param = _lookup(params, arg)
        if param is not None:
            used.add(param.name)
            if arg.location not in ("argument", param.location):
                findings.append(
                    Finding(
                        "E3",
                        (arg.location, arg.name),
                        arg.name,
                        expected=param.location,
                        suggestion=param.name,
                        operation=op.name,
                        doc=_param_doc(param),
                        message=f"parameter {arg.name!r} belongs in the {param.location}, "
                        f"not the {arg.location}",
                    )
                )
            else:
                matched.append((arg, param))
            continue
        if arg.location == "header" or (arg.location == "body" and body_open):
            continue  # clients add headers freely; open bodies take extra fields
        finding = _unknown(op, arg, params, catalog, matcher, threshold)
        if finding.suggestion is not None:
            meant.add(finding.suggestion)
        findings.append(finding)

    for p in params:
        if p.required and p.name not in used and p.name not in meant:
            if p.location == "header" and any(
                a.location == "header" and a.name.lower() == p.name.lower() for a in args
            ):
                continue
            findings.append(
                Finding(
                    "E3.4",
                    (p.location, p.name),
                    None,
                    expected=p.name,
                    suggestion=p.name,
                    operation=op.name,
                    doc=_param_doc(p),
                    message=f"required {_where(p)}parameter {p.name!r} is missing",
                )
            )
    return ParamCheck(tuple(findings), tuple(matched))


def _where(p: Parameter) -> str:
    return "" if p.location == "argument" else f"{p.location} "


def _lookup(params: list[Parameter], arg: Arg) -> Parameter | None:
    same_place = [p for p in params if p.name == arg.name and p.location == arg.location]
    if same_place:
        return same_place[0]
    if arg.location == "header":
        for p in params:
            if p.location == "header" and p.name.lower() == arg.name.lower():
                return p
    for p in params:
        if p.name == arg.name:
            return p
    return None


def _body_allows_extra(op: Operation) -> bool:
    schema = op.body_schema
    if not isinstance(schema, Mapping):
        return False
    extra = schema.get("additionalProperties", False)
    return bool(extra)


def _unknown(
    op: Operation,
    arg: Arg,
    params: list[Parameter],
    catalog: ApiCatalog,
    matcher: NameMatcher | None,
    threshold: float,
) -> Finding:
    where = (arg.location, arg.name)
    names = [p.name for p in params]
    place = "" if arg.location == "argument" else f"{arg.location} "
    literal = closest_literal(arg.name, names)
    if literal is not None:
        p = next(p for p in params if p.name == literal)
        return Finding(
            "E3.2",
            where,
            arg.name,
            expected=literal,
            suggestion=literal,
            operation=op.name,
            doc=_param_doc(p),
            message=f"unknown {place}parameter {arg.name!r}; it is a spelling variant of "
            f"{literal!r}",
        )
    semantic = None
    if matcher is not None and names:
        ranked = matcher.name_similarity(arg.name, names)
        if ranked and ranked[0].score >= threshold:
            semantic = (ranked[0].name, float(ranked[0].score))
    owners = [o.name for o in catalog.parameter_owners.get(arg.name, ()) if o.name != op.name]
    if owners:
        suggestion = semantic[0] if semantic else closest_spelling(arg.name, names)
        shown = ", ".join(owners[:3])
        return Finding(
            "E3.1",
            where,
            arg.name,
            expected=names,
            suggestion=suggestion,
            operation=op.name,
            message=f"parameter {arg.name!r} belongs to {shown}, not to {op.name}",
        )
    if semantic is not None:
        best, score = semantic
        p = next(p for p in params if p.name == best)
        return Finding(
            "E3.3",
            where,
            arg.name,
            expected=best,
            suggestion=best,
            operation=op.name,
            doc=_param_doc(p),
            message=f"unknown {place}parameter {arg.name!r}; the closest documented one is "
            f"{best!r} (similarity {score:.2f})",
        )
    shown = ", ".join(names) if names else "none"
    return Finding(
        "E3",
        where,
        arg.name,
        expected=names,
        suggestion=closest_spelling(arg.name, names),
        operation=op.name,
        message=f"unknown {place}parameter {arg.name!r}; {op.name} takes: {shown}",
    )
