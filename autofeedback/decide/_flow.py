"""The certain repairs of a sequence: a step of a trace (its earlier responses are known),
and a program (its earlier steps' documented responses are known).

Beyond the repairs of one call (:mod:`autofeedback.decide._repairs`), applied to each step:

* E5.1: a value read from a variable nothing assigned, where exactly one earlier step's
  documented response has the path it reads (``x.books[0].id`` -> ``b.books[0].id``);
* E5.2: a reference path with a level left out or one field misspelt, where exactly one
  documented path fits (``r.items[0].id`` -> ``r.albums.items[0].id``);
* E5.3: a placeholder or made-up identifier, where exactly one earlier response holds one
  value of that kind (a trace), or one earlier step's documented response has the field
  (a program: ``bookId='<book_id>'`` -> ``bookId=b.books[0].id``). The field must win by
  :data:`FIELD_MARGIN` over the step's other fields of that kind, and an item of a list
  is the first one (a search's first hit); an instruction that asks for another one
  (``the third track``) leaves the value to the model, which knows which list it counts
  (the third episode of a show is not the third show a search returned).

In a program, where no earlier step calls a producer of such a value, the producer is
inserted before the step (``b = searchBooks()`` then ``bookId=b.books[0].id``), when one
operation wins clearly among every producer of the catalog and needs no argument: a call
with its own inputs to choose is the model's to write.

A program is repaired in its own text: each change is made where the model wrote it, and
the program is read and checked again; a round that leaves more errors or an error where
it changed something is undone.

This module holds what both share and the repairs of a trace's step; a program's are in
:mod:`autofeedback.decide._flow_program`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote_plus, urlsplit, urlunsplit

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.decide._repairs import CallRepairer
from autofeedback.flow._paths import parse_path
from autofeedback.flow._program import ITEM
from autofeedback.flow._sequence import Sequence as StepSequence
from autofeedback.scanner._sequences import SequenceChecker

__all__ = ["repair_step", "values_at"]

#: what a value read from a response is to the call checks of its step
STAND_IN = "<from an earlier response>"
#: the most distinct values of a kind an earlier response may hold for one to be taken
_ONE = 1
#: how far the best response field of a kind must score above the next one of the same
#: step for a made-up value to be read from it (the data-flow graph's scores: a field
#: named after the parameter's resource scores about 0.7, a bare ``id`` about 0.2)
FIELD_MARGIN = 0.15
#: ordinal words of an instruction that ask for an item other than the first
_ORDINALS = frozenset(
    {
        *("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"),
        *("tenth", "last", "penultimate", "2nd", "3rd", "4th", "5th", "6th", "7th"),
        *("8th", "9th", "10th"),
    }
)


def first_item_sure(instruction: str | None, lists: int) -> bool:
    """Whether the first item of each of ``lists`` lists on a response path is the one
    meant: yes where the path crosses none, or the instruction asks for no other item.

    >>> first_item_sure("play the newest album of BIGBANG", 1)
    True
    >>> first_item_sure("remove the third track from My Music", 1)
    False
    >>> first_item_sure("a poster of the third episode of Band of Brothers", 0)
    True
    """
    if lists == 0:
        return True
    words = re.findall(r"[a-z0-9]+", (instruction or "").lower())
    return not any(w in _ORDINALS for w in words)


def _errors(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def _step_of(f: Finding) -> int | None:
    head = f.location[0] if f.location else ""
    if head.startswith("step[") and head.endswith("]") and head[5:-1].isdigit():
        return int(head[5:-1])
    return None


def _inner(f: Finding) -> Finding:
    return dataclasses.replace(f, location=f.location[1:])


def values_at(body: Any, path: str) -> list[Any]:
    """Every scalar value at ``path`` (``results[].id``) in a response ``body``.

    >>> values_at({"results": [{"id": 7}, {"id": 8}]}, "results[].id")
    [7, 8]
    """
    found: list[Any] = []

    def walk(value: Any, steps: list[Any]) -> None:
        if len(found) > 1000:
            return
        if not steps:
            if value is None or isinstance(value, (str, int, float, bool)):
                found.append(value)
            return
        step, rest = steps[0], steps[1:]
        if step == ITEM or isinstance(step, int):
            if isinstance(value, list):
                items = value if step == ITEM else value[step : step + 1]
                for item in items:
                    walk(item, rest)
        elif isinstance(value, Mapping) and step in value:
            walk(value[step], rest)

    walk(body, parse_path(path))
    return found


# -- a step of a trace ----------------------------------------------------------------


def repair_step(
    checker: SequenceChecker,
    seq: StepSequence,
    index: int,
    findings: Sequence[Finding],
) -> tuple[ApiRequest, list[Repair], list[Finding]] | None:
    """The request of step ``index`` of ``seq`` with its certain repairs, the repairs, and
    its findings then (located inside the step); ``None`` when nothing was repaired.
    ``findings``: the step's findings now, located inside the step."""
    step = seq.steps[index]
    request = step.request
    if request is None or step.call is not None:
        return None

    def check(r: ApiRequest) -> list[Finding]:
        steps = list(seq.steps)
        steps[index] = dataclasses.replace(step, request=r)
        moved = dataclasses.replace(seq, steps=tuple(steps))
        where = f"step[{index}]"
        return [
            _inner(f)
            for f in checker.iter_findings(moved)
            if f.location[:1] == (where,) and f.code != "E2.1"
        ]

    scanner = checker.scanner
    repairer = CallRepairer(_catalog_at(checker, seq, index), check, scanner._matcher)
    current, repairs, found = repairer.repair(request, findings)
    # E5.3: a made-up identifier where one earlier response holds the one value of its kind
    grounded = _ground_from_responses(checker, seq, index, current, _errors(found))
    if grounded is not None:
        candidate, made = grounded
        after = check(candidate)
        if len(_errors(after)) < len(_errors(found)):
            current, found = candidate, after
            repairs.extend(made)
    if not repairs:
        return None
    return current, repairs, found


def _catalog_at(checker: SequenceChecker, seq: StepSequence, index: int) -> ApiCatalog:
    """The catalog step ``index`` is judged against (a tool search's tools joined)."""
    return checker.catalog_at(seq, index)


def _operation(
    checker: SequenceChecker, request: ApiRequest, catalog: ApiCatalog | None = None
) -> Operation | None:
    catalog = catalog if catalog is not None else checker.scanner.catalog
    if request.is_http:
        assert request.method is not None and request.url is not None
        hit = catalog.match_http(request.method, request.url)
        return hit[0] if hit else None
    return catalog.get(request.name or "")


def _ground_from_responses(
    checker: SequenceChecker,
    seq: StepSequence,
    index: int,
    request: ApiRequest,
    errors: list[Finding],
) -> tuple[ApiRequest, list[Repair]] | None:
    op = _operation(checker, request, _catalog_at(checker, seq, index))
    if op is None:
        return None
    made: list[Repair] = []
    for f in errors:
        if f.code != "E5.3" or len(f.location) < 2:
            continue
        name = f.location[-1]
        if isinstance(f.got, (list, dict)) or not _stand_in(f.got):
            # only a stand-in (<device_id>) is read from an earlier response: a value the
            # model wrote is its own, and another in its place would change what the
            # call does (the model is told where to read one)
            continue
        value = _one_value(checker, seq, index, op, name)
        if value is None:
            continue
        changed = _set_argument(request, op, f.location[0], name, value)
        if changed is None:
            continue
        request = changed
        made.append(Repair("E5.3", f.location, f.got, value))
    return (request, made) if made else None


def _stand_in(value: Any) -> bool:
    """Whether ``value`` is a placeholder (``<device_id>``, ``YOUR_TOKEN``) rather than a
    value the model wrote: only a stand-in gives way to an inserted call's answer."""
    from autofeedback.flow._grounding import placeholder_kind

    return placeholder_kind(value, id_like=True) == "placeholder"


def _one_value(
    checker: SequenceChecker, seq: StepSequence, index: int, op: Operation, name: str
) -> Any:
    """The one value of ``name``'s kind that the earlier responses hold, or ``None``."""
    producers = checker.producers(op.name, name)
    # the earlier responses that hold a value of this kind: exactly one may; in it, the
    # field of that kind that wins clearly (_clear_best); of its values, the first (a
    # search's first hit, as a program reads results[0]) unless the instruction asks
    # for another item
    found: list[list[tuple[Any, list[Any]]]] = []
    for step in seq.steps[:index]:
        if step.response is None or step.request is None:
            continue
        step_op = _operation(checker, step.request)
        if step_op is None:
            continue
        fields = []
        for p in producers:
            if p.operation == step_op.name:
                values = [
                    v
                    for v in values_at(step.response.body, p.path)
                    if v is not None and not isinstance(v, bool)
                ]
                if values:
                    fields.append((p, values))
        fields.sort(key=lambda x: -float(x[0].score))
        if fields and getattr(fields[0][0], "via", "") != "weak":
            found.append(fields)
    if len(found) != _ONE or not _clear_best([p for p, _ in found[0]]):
        return None
    best, values = found[0][0]
    if not first_item_sure(seq.instruction, parse_path(best.path).count(ITEM)):
        return None
    return values[0]


def _clear_best(ranked: Sequence[Any]) -> bool:
    """Whether the first of one step's response fields of a kind, best first, is the one
    meant: not a weak guess, and :data:`FIELD_MARGIN` above the next."""
    if not ranked or getattr(ranked[0], "via", "") == "weak":
        return False
    return len(ranked) == 1 or float(ranked[0].score) - float(ranked[1].score) >= FIELD_MARGIN


def _set_argument(
    request: ApiRequest, op: Operation, where: str, name: str, value: Any
) -> ApiRequest | None:
    if not request.is_http:
        if name not in request.arguments:
            return None
        return dataclasses.replace(request, arguments={**request.arguments, name: value})
    assert request.url is not None
    split = urlsplit(request.url)
    if where == "path" and op.path:
        got = split.path.rstrip("/").split("/")
        want = op.path.rstrip("/").split("/")
        if len(want) > len(got):
            return None
        offset = len(got) - len(want)  # a server prefix before the template
        parts = list(got)
        for i, segment in enumerate(want):
            if segment == "{" + name + "}":
                parts[offset + i] = str(value)
                # the rest of the path as the model wrote it (a trailing slash kept)
                path = "/".join(parts) + split.path[len(split.path.rstrip("/")) :]
                url = urlunsplit((split.scheme, split.netloc, path, split.query, split.fragment))
                return dataclasses.replace(request, url=url)
        return None
    if where == "query" and name in request.params:
        return dataclasses.replace(request, params={**request.params, name: value})
    if where == "query":
        # in the URL's own query: only that pair's value is written again, the others
        # stay as the model encoded them
        pairs = split.query.split("&")
        at = [i for i, pair in enumerate(pairs) if unquote_plus(pair.partition("=")[0]) == name]
        if len(at) != 1:
            return None  # given twice: which one the step meant is the model's to say
        key = pairs[at[0]].partition("=")[0]
        pairs[at[0]] = f"{key}={quote(str(value), safe='')}"
        query = "&".join(pairs)
        url = urlunsplit((split.scheme, split.netloc, split.path, query, split.fragment))
        return dataclasses.replace(request, url=url)
    return None


# -- a program ----------------------------------------------------------------------


def per_step(findings: Sequence[Finding]) -> Iterator[tuple[int, list[Finding]]]:
    """The findings grouped by their step, located inside it."""
    groups: dict[int, list[Finding]] = {}
    for f in findings:
        i = _step_of(f)
        if i is not None:
            groups.setdefault(i, []).append(_inner(f))
    yield from sorted(groups.items())


Checker = Callable[[StepSequence], list[Finding]]
