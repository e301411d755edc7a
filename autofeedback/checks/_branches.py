"""Which branch of a ``oneOf``/``anyOf`` a value was meant for, and what it misses there:
the errors the value and body checks (:mod:`autofeedback.checks._check_values`) report
for a value that fits no documented shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from autofeedback.core._findings import Finding
from autofeedback.core._model import Operation

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = ["branch_errors", "misfit"]

_MAX_BRANCH_DEPTH = 6


def branch_errors(err: ValidationError, depth: int = 0) -> list[tuple[ValidationError, str]]:
    """A value that fits no branch of a ``oneOf``/``anyOf``: the errors against the branch
    it was meant for, each with that branch's name (``""`` for other errors)."""
    if err.validator not in ("anyOf", "oneOf") or not err.context or depth > _MAX_BRANCH_DEPTH:
        return [(err, "")]
    branches = err.validator_value if isinstance(err.validator_value, list) else []
    by_branch: dict[int, list[ValidationError]] = {}
    for sub in err.context:
        index = sub.relative_schema_path[0] if sub.relative_schema_path else None
        if isinstance(index, int):
            by_branch.setdefault(index, []).append(sub)
    if not by_branch:
        return [(err, "")]
    chosen = _meant_branch(err, branches, by_branch)
    name = _branch_name(branches[chosen], chosen) if chosen < len(branches) else f"#{chosen + 1}"
    out: list[tuple[ValidationError, str]] = []
    for sub in by_branch[chosen]:
        for inner, inner_name in branch_errors(sub, depth + 1):
            out.append((inner, f"{name} > {inner_name}" if inner_name else name))
    return out


def _meant_branch(
    err: ValidationError, branches: list[Any], by_branch: dict[int, list[ValidationError]]
) -> int:
    tagged = _discriminated(err, branches)
    if tagged is not None and tagged in by_branch:
        return tagged

    def cost(i: int) -> tuple[int, int, int]:
        # a branch of the value's own type whose const/enum tags match, missed least
        errors = by_branch[i]
        wrong_type = any(e.validator == "type" and not e.relative_path for e in errors)
        tag_miss = sum(e.validator in ("const", "enum") for e in errors)
        return (int(wrong_type), tag_miss, len(errors))

    return min(by_branch, key=cost)


def _discriminated(err: ValidationError, branches: list[Any]) -> int | None:
    """The branch the value's ``discriminator`` property names, if the schema has one."""
    discriminator = err.schema.get("discriminator") if isinstance(err.schema, Mapping) else None
    instance = err.instance
    if not isinstance(discriminator, Mapping) or not isinstance(instance, Mapping):
        return None
    prop = discriminator.get("propertyName")
    tag = instance.get(prop) if isinstance(prop, str) else None
    if tag is None:
        return None
    mapping = discriminator.get("mapping")
    target = mapping.get(tag) if isinstance(mapping, Mapping) else None
    target_name = target.rsplit("/", 1)[-1] if isinstance(target, str) else None
    for i, branch in enumerate(branches):
        if tag in _tags(branch, prop):
            return i
        if target_name and isinstance(branch, Mapping) and branch.get("title") == target_name:
            return i
    return None


def _tags(branch: Any, prop: Any) -> list[Any]:
    """The values a branch allows for its discriminator property."""
    if not isinstance(branch, Mapping) or not isinstance(prop, str):
        return []
    props = branch.get("properties")
    schema = props.get(prop) if isinstance(props, Mapping) else None
    if not isinstance(schema, Mapping):
        for part in branch.get("allOf") or []:
            found = _tags(part, prop)
            if found:
                return found
        return []
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else []


def _branch_name(branch: Any, index: int) -> str:
    if isinstance(branch, Mapping):
        for key in ("title", "x-recursive-ref", "x-truncated-ref"):
            if isinstance(branch.get(key), str):
                return str(branch[key]).rsplit("/", 1)[-1]
    return f"branch {index + 1}"


def misfit(op: Operation, err: ValidationError, branch: str) -> Finding | None:
    """The finding for an error of the body itself that E3 leaves unsaid: a field the
    shape ``branch`` requires and no other does (E3.4 reports those every shape
    requires), or another constraint of that shape on the body (E4.2)."""
    if err.absolute_path:
        return None  # a field's error
    where = (
        f"the body fits none of its documented shapes; the nearest, {branch},"
        if branch
        else "the documented body"
    )
    if err.validator == "required":
        required = {p.name for p in op.parameters if p.required and p.location == "body"}
        names = err.validator_value if isinstance(err.validator_value, list) else []
        sent = err.instance if isinstance(err.instance, Mapping) else {}
        missing = [n for n in names if isinstance(n, str) and n not in sent and n not in required]
        if not missing:
            return None
        return Finding(
            "E3.4",
            ("body", missing[0]),
            None,
            expected=missing[0],
            operation=op.name,
            message=f"{where} requires {missing[0]!r}",
        )
    return Finding(
        "E4.2",
        ("body",),
        None,
        operation=op.name,
        message=f"{where} is broken: {err.message[:300]}",
    )
