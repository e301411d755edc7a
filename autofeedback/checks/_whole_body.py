"""A request body that is not an object of fields, checked as one value: a JSON array
(``POST /users/createWithList`` takes ``[{...}, ...]``), a JSON scalar, or the text of a
``text/*`` body, against the schema the docs give it; and a body sent as anything but an
object, whatever the docs say it is (``[1, 2]`` where they say object). An object body's
fields are the operation's parameters and are checked one by one (:mod:`._check_params`);
these had nothing to be checked by, and a request sending ``[1, "x"]`` for an array of
integers, eleven characters where five are allowed, or an array where the docs say object
was reported clean."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from typing import Any

from autofeedback.checks._branches import branch_errors
from autofeedback.checks._check_values import (
    _MAX_PER_PARAM,
    _finding,
    _spec_faults,
    _validator,
)
from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._patterns import PatternBudget
from autofeedback.core._resolve import Arg, content_type

_UNREAD = object()


def whole_body_schema(op: Operation) -> Mapping[str, Any] | None:
    """The body's schema where the body is one value, not an object of fields."""
    schema = op.body_schema
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind}
    if not kinds or kinds & {"object", None}:
        return None  # fields, or a shape only a composition says: the other checks'
    return schema


def _body_value(op: Operation, request: ApiRequest) -> Any:
    body = request.body
    if not isinstance(body, (str, bytes)):
        return body  # written as JSON: a list, a number...
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    media = (content_type(request.headers) or op.body_media or "").lower()
    if media.startswith("text/"):
        return text
    if "json" in media or not media:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return _UNREAD  # not JSON: not judged here
    return _UNREAD  # a form or another media: its own readers judge it


def _an_object(op: Operation, request: ApiRequest) -> bool:
    """Whether :func:`_body_value` would read the body as an object (or as no JSON),
    told without reading it: the parameter checks have read it already."""
    body = request.body
    if isinstance(body, Mapping):
        return True
    if not isinstance(body, (str, bytes)):
        return False
    media = (content_type(request.headers) or op.body_media or "").lower()
    return not media.startswith("text/") and body.lstrip()[:1] in ("{", b"{")


def check_whole_body(
    op: Operation, request: ApiRequest, budget: PatternBudget | None = None
) -> Iterator[Finding]:
    """E4 for a body sent as one value (see the module), located at ``("body", ...)``, at
    most three, type errors first. A body sent as anything but a JSON object is judged
    here whatever its schema is (an array where the docs say object, a scalar for a
    ``oneOf`` of scalars): it has no fields for the other checks to see."""
    body = request.body
    if body in (None, "", b"") or not isinstance(op.body_schema, Mapping):
        return
    whole = whole_body_schema(op)
    if whole is None and _an_object(op, request):
        return  # an object sent for an object's schema: its fields are checked one by one
    value = _body_value(op, request)
    if value is _UNREAD:
        return
    schema = whole if isinstance(value, Mapping) else op.body_schema
    if schema is None:
        return
    budget = budget or PatternBudget.current() or PatternBudget()
    try:
        with budget:
            found = [branch_errors(e) for e in _validator(schema).iter_errors(value)]
    except _spec_faults():
        return
    errors = sorted(
        (pair for group in found for pair in group),
        key=lambda pair: (pair[0].validator != "type", len(pair[0].absolute_path)),
    )
    arg = Arg("body", "body", value)
    for err, branch in errors[:_MAX_PER_PARAM]:
        finding = _finding(op, arg, err, "", branch)
        yield dataclasses.replace(finding, location=("body", *finding.location[2:]))
