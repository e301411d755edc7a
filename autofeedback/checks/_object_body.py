"""What a request body's schema says of the object as a whole: how many fields it may
have (``maxProperties``, ``minProperties``), the fields one field brings with it
(``dependentRequired``) and what their names may be (``propertyNames``).

An object body's fields are the operation's parameters, checked one by one
(:mod:`._check_params`, :mod:`._check_values`), so these keywords, which judge no one
field, were checked nowhere: a body of two fields where the docs allow one was reported
clean. They are read from the body schema's top level and its ``allOf`` parts, and
judged on the fields the request sent, known or not. A composed body (``oneOf`` /
``anyOf``) is validated whole by :func:`~._check_values.check_body`, which says so."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from autofeedback.checks._check_values import (
    _finding,
    _spec_faults,
    _validator,
    composed_body,
    object_keywords,
)
from autofeedback.core._findings import Finding
from autofeedback.core._model import Operation
from autofeedback.core._patterns import PatternBudget
from autofeedback.core._resolve import Arg


def check_object_body(
    op: Operation, args: Sequence[Arg], sent: bool, budget: PatternBudget | None = None
) -> Iterator[Finding]:
    """E4.2 for a body whose fields, as sent, break what its schema says of the whole
    object, located at ``("body",)``, or a function call's arguments that break what its
    parameters schema says of them as a whole (:attr:`Operation.whole_arguments`),
    located at ``("arguments",)``; at most one. ``sent``: whether the request sent a
    body at all (an empty object is one, with no field)."""
    if op.whole_arguments is not None:
        # a function's: judged on the arguments the call sent, known or not
        yield from _whole(
            op, op.whole_arguments, {a.name: a.value for a in args}, ("arguments",), budget
        )
        return
    if composed_body(op):
        return  # validated whole, these keywords included, by check_body
    schema = object_keywords(op.body_schema)
    # an HTTP operation called by name (getBook(...)) sends its body's fields as arguments
    fields = {a.name: a.value for a in args if a.location == "body" or _body_field(op, a)}
    if schema is None or not (fields or sent):
        return  # no body sent: whether one must be is E3.4's
    yield from _whole(op, schema, fields, ("body",), budget)


def _body_field(op: Operation, arg: Arg) -> bool:
    """Whether ``arg``, given by name, is a field of ``op``'s body."""
    param = op.parameter(arg.name) if arg.location == "argument" else None
    return param is not None and param.location == "body"


def _whole(
    op: Operation,
    schema: Mapping[str, Any],
    fields: dict[str, Any],
    where: tuple[str, ...],
    budget: PatternBudget | None,
) -> Iterator[Finding]:
    budget = budget or PatternBudget.current() or PatternBudget()
    try:
        with budget:
            error = next(iter(_validator(schema).iter_errors(fields)), None)
    except _spec_faults():
        return
    if error is None:
        return
    finding = _finding(
        op, Arg(where[0], "body" if where == ("body",) else "argument", fields), error, ""
    )
    yield dataclasses.replace(finding, location=where)
