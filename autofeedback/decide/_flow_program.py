"""The certain repairs of a program (see :mod:`autofeedback.decide._flow`): each change made
where the model wrote it, the program read and checked again, a round that leaves more
errors undone; the E5 paths rebound or repathed, a producer inserted before a step."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._words import no_side_effects, plural_pair, same_words, slip
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.decide._flow import (
    FIELD_MARGIN,
    STAND_IN,
    _catalog_at,
    _clear_best,
    _errors,
    _inner,
    _operation,
    _stand_in,
    _step_of,
    first_item_sure,
)
from autofeedback.decide._repairs import ROUNDS, CallRepairer
from autofeedback.flow._paths import format_path, iter_paths, parse_path, schema_at
from autofeedback.flow._program import ITEM, ProgramCall
from autofeedback.flow._sequence import Sequence as StepSequence
from autofeedback.flow._sequence import Step, sequence_from_program
from autofeedback.scanner._scan import Scanner
from autofeedback.scanner._sequences import SequenceChecker

__all__ = ["producer_first", "repair_program"]


@dataclasses.dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str
    step: int
    param: str | None


def repair_program(
    checker: SequenceChecker,
    text: str,
    *,
    instruction: str | None = None,
    tools: Any = None,
    responses: Any = None,
    findings: Sequence[Finding] | None = None,
    dialogue: str = "",
) -> tuple[str, list[Repair], list[Finding]] | None:
    """``text`` with its certain repairs, the repairs, and the program's findings then;
    ``None`` when nothing was repaired. ``dialogue``: as :func:`sequence_from_program`."""

    def sequence(source: str) -> StepSequence:
        return sequence_from_program(
            source, instruction=instruction, tools=tools, responses=responses, dialogue=dialogue
        )

    def read(source: str) -> tuple[StepSequence, list[Finding]]:
        seq = sequence(source)
        return seq, checker.check(seq)

    seq, found = read(text) if findings is None else (sequence(text), list(findings))
    repairs: list[Repair] = []
    current = text
    for _ in range(ROUNDS):
        errors = _errors(found)
        if not errors:
            break
        planned = _plan(checker, seq, current, errors)
        if not planned:
            break
        edits, made = zip(*planned, strict=True)
        source = _apply(current, list(edits))
        if source is None:
            break
        new_seq, after = read(source)
        # a call Python reads as something else once edited (a name with a hyphen, a
        # builtin's, a keyword for a parameter) is a call lost: never a repair
        if len(new_seq.steps) != len(seq.steps):
            break
        if not _better(errors, _errors(after), list(edits)):
            break
        current, seq, found = source, new_seq, after
        repairs.extend(made)
    errors = _errors(found)
    inserted = _insert_producer(checker, seq, current, errors) if errors else None
    if inserted is not None:
        source, at, param, added = inserted
        new_seq, after = read(source)
        left = _errors(after)
        # the inserted call, read as one (now step[at]), and the value read from it must
        # be clean
        if (
            len(new_seq.steps) == len(seq.steps) + 1
            and len(left) < len(errors)
            and not any(
                _step_of(f) == at
                or (_step_of(f) == at + 1 and len(f.location) > 2 and f.location[2] == param)
                for f in left
            )
        ):
            current, seq, found = source, new_seq, after
            repairs.extend(added)
    if not repairs:
        return None
    return current, repairs, found


def _better(before: list[Finding], after: list[Finding], edits: list[_Edit]) -> bool:
    renamed = {e.step for e in edits if e.param is None}
    if renamed:
        # a function renamed: its own parameters are judged from now on (the next round
        # repairs what is certain of them); its name must be right
        if any(
            f.code.startswith("E2") and f.code != "E2.1" and _step_of(f) in renamed for f in after
        ):
            return False
    elif len(after) >= len(before):
        return False
    # every other step's changes leave no error where they were made, renamed beside or not
    touched = {(e.step, e.param) for e in edits if e.step not in renamed}
    return not any(
        (_step_of(f), f.location[2] if len(f.location) > 2 else None) in touched
        and f.code != "E3.4"
        for f in after
    )


def _apply(text: str, edits: list[_Edit]) -> str | None:
    """``text`` with the edits made (none may overlap), or ``None``."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in pairwise(ordered):
        if a.end > b.start:
            return None
    out = text
    for e in reversed(ordered):
        out = out[: e.start] + e.text + out[e.end :]
    return out


def _plan(
    checker: SequenceChecker, seq: StepSequence, text: str, errors: list[Finding]
) -> list[tuple[_Edit, Repair]]:
    by_step: dict[int, list[Finding]] = {}
    for f in errors:
        i = _step_of(f)
        if i is not None and i < len(seq.steps):
            by_step.setdefault(i, []).append(f)
    planned: list[tuple[_Edit, Repair]] = []
    for i, found in sorted(by_step.items()):
        step = seq.steps[i]
        call = step.call
        if call is None or call.spans is None:
            continue
        calls = [f for f in found if f.code[:2] in ("E2", "E3", "E4")]
        flows = [f for f in found if f.code.startswith("E5")]
        named = _call_repairs(checker, step, call, text, calls, checker.catalog_at(seq, i))
        planned.extend(named)
        if any(e.param is None for e, _ in named):
            continue  # a renamed function: its references are judged against it next round
        for f in flows:
            one = _flow_repair(checker, seq, i, call, text, f)
            if one is not None:
                planned.append(one)
    return planned


def _call_repairs(
    checker: SequenceChecker,
    step: Step,
    call: ProgramCall,
    text: str,
    found: list[Finding],
    catalog: ApiCatalog | None = None,
) -> list[tuple[_Edit, Repair]]:
    if not found or call.positional:
        return []
    scanner = checker.scanner
    if catalog is not None and catalog is not scanner.catalog:
        # a tool a search earlier in the dialogue documented: repaired as a listed one
        scanner = Scanner(catalog, retriever=scanner._retriever)
    refs = {k for k, v in call.arguments.items() if not _is_literal(v)}
    request = ApiRequest(
        name=call.name,
        arguments={k: (STAND_IN if k in refs else v) for k, v in call.arguments.items()},
        format="python",
    )

    def check(r: ApiRequest) -> list[Finding]:
        stand_ins = {k for k, v in r.arguments.items() if v == STAND_IN}
        return [
            f
            for f in scanner.check_request(r)
            if not (f.code.startswith("E4") and len(f.location) > 1 and f.location[1] in stand_ins)
            and not (f.code == "E3.4" and f.suggestion in stand_ins)
        ]

    repairer = CallRepairer(scanner.catalog, check, scanner._matcher)
    inner = [_inner(f) for f in found]
    _, repairs, _ = repairer.repair(request, inner)
    out: list[tuple[_Edit, Repair]] = []
    spans = call.spans
    assert spans is not None
    for r in repairs:
        if r.after is None and r.before in refs:
            # an argument the model computed from an earlier response is data flow it
            # meant: a parameter the docs do not list, perhaps, but never dropped
            return []
        # a second value taken out of the name follows the first one written in
        added = any(e.start == e.end for e, _ in out)
        edit = _call_edit(step.index, call, text, r, added=added)
        if edit is None:
            return []  # all of a call's repairs or none: they were checked together
        out.append((edit, dataclasses.replace(r, location=(f"step[{step.index}]", *r.location))))
    return out


def _call_edit(
    index: int, call: ProgramCall, text: str, r: Repair, *, added: bool = False
) -> _Edit | None:
    """The edit of the program's ``text`` that makes the repair ``r`` of ``call``, or
    ``None``; ``added``: an earlier repair of the call writes an argument in already."""
    spans = call.spans
    assert spans is not None
    if r.location[:1] == ("api",):
        start, end = spans.func
        return _Edit(start, end, str(r.after), index, None)
    if len(r.location) < 2:
        return None
    name = r.location[1]
    if r.code.startswith("E3") and name in spans.keywords:
        start, end = spans.keywords[name]
        if r.after is None or text[start : start + len(name)] != name:
            return None  # nothing is ever dropped (the repair rule)
            return None
        return _Edit(start, start + len(name), str(r.after), index, str(r.after))
    if r.code == "E4.1" and name in spans.values:
        start, end = spans.values[name]
        inside = list(r.location[2:])
        value = call.arguments.get(name)
        if inside:
            from autofeedback.decide._repairs import _copy_set

            value = _copy_set(value, inside, r.after)
        else:
            value = r.after
        return _Edit(start, end, repr(value), index, name)
    if r.before is None and r.code == "E2.2":  # a path value taken out of the API name
        close = spans.call[1] - 1
        sep = ", " if call.arguments or call.positional or added else ""
        return _Edit(close, close, f"{sep}{name}={r.after!r}", index, name)
    return None


def _is_literal(value: Any) -> bool:
    from autofeedback.flow._program import is_literal

    return is_literal(value)


def _flow_repair(
    checker: SequenceChecker,
    seq: StepSequence,
    index: int,
    call: ProgramCall,
    text: str,
    f: Finding,
) -> tuple[_Edit, Repair] | None:
    spans = call.spans
    assert spans is not None
    if len(f.location) < 3:
        return None
    param = f.location[-1]
    if param not in spans.values:
        return None
    start, end = spans.values[param]
    variables = _variables(seq, index)
    if f.code in ("E5.1", "E5.2") and isinstance(f.got, str):
        at = _written_at(text, f.got, start, end)
        if at is None:
            return None
        before = text[at[0] : at[1]]  # as written: b["books"][0]["id"] is shown b['books']...
        if f.code == "E5.1":
            new = _rebound(checker, variables, before, f)
        else:
            new = _repathed(checker, seq, f, before)
        if new is None or new == before:
            return None
        return _Edit(*at, new, index, param), Repair(f.code, f.location, before, new)
    if f.code == "E5.3" and _is_literal(call.arguments.get(param)) and _stand_in(f.got):
        # only a stand-in (<order_id>) is read from an earlier response: a value the model
        # wrote (order_id=6) is its own, and replacing it would change what the call does
        op = checker.scanner.catalog.get(call.name)
        if op is None:
            return None
        reference = _reference(checker, variables, op, param, seq.instruction)
        if reference is None:
            return None
        return (
            _Edit(start, end, reference, index, param),
            Repair("E5.3", f.location, call.arguments.get(param), reference),
        )
    return None


def _written_at(text: str, shown: str, start: int, end: int) -> tuple[int, int] | None:
    """Where ``text`` writes the read a finding shows as ``shown`` (in :func:`ast.unparse`'s
    spelling, ``b['books'][0]['id']`` for ``b["books"][0]["id"]``): the first in the value
    ``text[start:end]``, else the one place in the program (a name assigned on another
    line), else ``None``."""
    from autofeedback.flow._program import reads_at

    spans = reads_at(text, shown)
    inside = [s for s in spans if start <= s[0] and s[1] <= end]
    if inside:
        return inside[0]
    return spans[0] if len(spans) == 1 else None


def _insert_producer(
    checker: SequenceChecker, seq: StepSequence, text: str, errors: list[Finding]
) -> tuple[str, int, str, list[Repair]] | None:
    """E5.3 in a program where no earlier step calls a producer of the value: the
    program with the producer inserted before the step and the value read from it, the
    inserted step's index, the parameter, and the two repairs; ``None`` where that is not
    certain. One insertion per decision: the program is read and checked again after it."""
    catalog = checker.scanner.catalog
    for f in errors:
        i = _step_of(f)
        if f.code != "E5.3" or i is None or i >= len(seq.steps) or len(f.location) < 3:
            continue
        call = seq.steps[i].call
        param = f.location[-1]
        if call is None or call.spans is None or param not in call.spans.values:
            continue
        if not _is_literal(call.arguments.get(param)) or not _stand_in(f.got):
            continue  # a value the model wrote is never replaced by an inserted call's
        op = catalog.get(call.name)
        called = set(_variables(seq, i).values()) | {s.call.name for s in seq.steps[:i] if s.call}
        chosen = _producer_to_insert(checker, op, param, called, seq.instruction)
        if chosen is None:
            continue
        best, producer = chosen
        steps = parse_path(best.path)
        line = text.rfind("\n", 0, call.spans.call[0]) + 1
        if text[line : line + 1].isspace():
            continue  # inside a block: where the call belongs is not certain
        var = _fresh_name(text, producer.name)
        inserted = f"{var} = {producer.name}()"
        reference = _read_first(var, steps)
        start, end = call.spans.values[param]
        source = text[:line] + inserted + "\n" + text[line:start] + reference + text[end:]
        where = f"step[{i}]"
        return (
            source,
            i,
            param,
            [
                Repair("E5.3", (where, "inserted before"), None, inserted),
                Repair("E5.3", f.location, call.arguments.get(param), reference),
            ],
        )
    return None


def _producer_to_insert(
    checker: SequenceChecker,
    op: Operation | None,
    param: str,
    called: set[str],
    instruction: str | None,
) -> tuple[Any, Operation] | None:
    """The producer of ``op``'s ``param`` to call first, where no operation in ``called``
    produces it: ``(its field, the operation)`` when one operation wins clearly among
    every producer of the catalog, takes no argument, and the instruction asks for no
    item but the first; else ``None``."""
    p = op.parameter(param) if op is not None else None
    if op is None or p is None:
        return None
    types = p.schema.get("type") if isinstance(p.schema, Mapping) else None
    if types == "array" or (isinstance(types, list) and "array" in types):
        return None  # a list parameter: which items is not certain
    producers = checker.producers(op.name, param)
    if any(x.operation in called for x in producers):
        return None  # an earlier step gives it, or may: _reference's case
    # every operation that produces it, its fields best first; the best operation must
    # win clearly over the others' best fields and over its own other fields
    by_op: dict[str, list[Any]] = {}
    for x in sorted(producers, key=lambda x: -float(x.score)):
        by_op.setdefault(x.operation, []).append(x)
    ranked = sorted(by_op.values(), key=lambda fields: -float(fields[0].score))
    if not ranked or not _clear_best([fs[0] for fs in ranked]) or not _clear_best(ranked[0]):
        return None
    best = ranked[0][0]
    producer = checker.scanner.catalog.get(best.operation)
    if producer is None or not no_side_effects(producer):
        return None  # a call that may change something is never made unasked
    if not _takes_nothing(checker, producer.name):
        return None  # it needs arguments: which ones is the model's to say
    if not first_item_sure(instruction, parse_path(best.path).count(ITEM)):
        return None
    return best, producer


def producer_first(
    checker: SequenceChecker,
    seq: StepSequence,
    index: int,
    findings: Sequence[Finding],
    request: ApiRequest | None = None,
) -> tuple[ApiRequest, Repair] | None:
    """A trace's step ``index`` made up a value (E5.3) that no earlier step's operation
    produces: the producer's call to send first (it takes no argument), and the repair
    that says so; ``None`` where that is not certain. ``findings``: the step's errors,
    located inside it; ``request``: the step's call as decided (its name repaired: Play
    is play), where it is not the step's own. The step is decided again once the
    producer's response is in the trace (:func:`repair_step` then reads the value from
    it)."""
    step = seq.steps[index]
    if step.request is None or step.request.is_http or step.call is not None:
        return None  # a call by name only: what a runner sends next
    catalog = _catalog_at(checker, seq, index)
    op = _operation(checker, request if request is not None else step.request, catalog)
    called: set[str] = set()
    for earlier in seq.steps[:index]:
        earlier_op = _operation(checker, earlier.request) if earlier.request else None
        if earlier_op is not None:
            called.add(earlier_op.name)
    for f in findings:
        if f.code != "E5.3" or len(f.location) < 2 or not _stand_in(f.got):
            continue  # a value the model wrote is never replaced by an inserted call's
        chosen = _producer_to_insert(checker, op, f.location[-1], called, seq.instruction)
        if chosen is not None:
            producer = chosen[1]
            request = ApiRequest(name=producer.name, arguments={}, format=step.request.format)
            where = f"step[{index}]"
            return request, Repair("E5.3", (where, "inserted before"), None, f"{producer.name}()")
    return None


def _takes_nothing(checker: SequenceChecker, operation: str) -> bool:
    """Whether ``operation`` called with no argument is a clean call."""
    return not any(
        e.severity == "error"
        for e in checker.scanner.check_request(
            ApiRequest(name=operation, arguments={}, format="python")
        )
    )


def _fresh_name(text: str, function: str) -> str:
    """A variable name for ``function``'s result that ``text`` does not use."""
    base = re.sub(r"\W+", "_", function).strip("_").lower() or "result"
    base = base if base[0].isalpha() else f"r_{base}"
    used = set(re.findall(r"[A-Za-z_]\w*", text))
    name, n = f"{base}_result", 1
    while name in used:
        n += 1
        name = f"{base}_result{n}"
    return name


def _variables(seq: StepSequence, index: int) -> dict[str, str]:
    """The variables bound by the steps before ``index``: variable -> function (the last
    binding of a name wins)."""
    out: dict[str, str] = {}
    for step in seq.steps[:index]:
        if step.call is not None and step.call.variable:
            out[step.call.variable] = step.call.name
    return out


def _chain(text: str) -> tuple[str, list[tuple[str, str, str]]] | None:
    """``r.results[0]["id"]`` -> ``("r", [("field", "results", "."), ("index", "0", ""),
    ("field", "id", '"')])``: each step and how it is written (a field read as an
    attribute, or as a key in its quotes); ``None`` for anything but a plain chain of
    fields and subscripts."""
    source = text.strip()
    try:
        node = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    steps: list[tuple[str, str, str]] = []
    while True:
        if isinstance(node, ast.Attribute):
            steps.append(("field", node.attr, "."))
            node = node.value
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                quoted = ast.get_source_segment(source, key) or ""
                quote = quoted[:1]
                if quoted != f"{quote}{key.value}{quote}":
                    return None  # a key written with escapes or a prefix: not rewritten
                steps.append(("field", key.value, quote))
            else:
                steps.append(("index", ast.unparse(key), ""))
            node = node.value
        elif isinstance(node, ast.Name):
            steps.reverse()
            return node.id, steps
        else:
            return None


def _written(root: str, steps: Sequence[tuple[str, str, str]]) -> str:
    out = root
    for kind, value, style in steps:
        if kind == "index":
            out += f"[{value}]"
        else:
            out += f".{value}" if style == "." else f"[{style}{value}{style}]"
    return out


def _schema_path(steps: Sequence[tuple[str, str, str]]) -> list[Any]:
    return [ITEM if kind == "index" else value for kind, value, _ in steps]


def _rebound(
    checker: SequenceChecker, variables: Mapping[str, str], got: str, f: Finding
) -> str | None:
    """E5.1: ``got`` read from the one earlier variable whose function's documented
    response has the path it reads; where several have it, the one whose function the
    data-flow graph names as the producer of this parameter, if exactly one."""
    chain = _chain(got)
    if chain is None:
        return None
    _, steps = chain
    if not steps:
        return None
    path = _schema_path(steps)
    fits = []
    for var, function in variables.items():
        schema = checker.response_schema(function)
        if schema is not None and schema_at(schema, path) is not None:
            fits.append(var)
    if len(fits) > 1 and f.operation and len(f.location) > 1:
        producing = {
            x.operation
            for x in checker.producers(f.operation, f.location[-1])
            if getattr(x, "via", "") != "weak"
        }
        fits = [var for var in fits if variables[var] in producing]
    if len(fits) != 1:
        return None
    return _written(fits[0], steps)


def _repathed(checker: SequenceChecker, seq: StepSequence, f: Finding, got: str) -> str | None:
    """E5.2: the reference ``got`` (``f.got`` as written) along the one documented path
    that keeps every field it wrote in order (a level left out), or changes one misspelt
    field; each field written as the model wrote its fields."""
    chain = _chain(got)
    if chain is None:
        return None
    root, steps = chain
    index = _step_of(f)
    variables = _variables(seq, index if index is not None else len(seq.steps))
    function = variables.get(root)
    schema = checker.response_schema(function) if function else None
    if schema is None:
        return None
    written = [value for kind, value, _ in steps if kind == "field"]
    if not written:
        return None
    fits = [p for p, _ in iter_paths(schema) if _fits(written, [s for s in p if s != ITEM])]
    if len(fits) > 1 and f.operation and len(f.location) > 1:
        # several documented paths keep what was written (search: albums.items[].id,
        # tracks.items[].id...): the one the data-flow graph names as the producer of
        # this parameter from this function, if exactly one
        produced = {
            x.path
            for x in checker.producers(f.operation, f.location[-1])
            if x.operation == function and getattr(x, "via", "") != "weak"
        }
        fits = [p for p in fits if format_path(list(p)) in produced]
    if len(fits) != 1:
        return None
    path = list(fits[0])
    styles = [style for kind, _, style in steps if kind == "field"]
    if len(styles) < len([s for s in path if s != ITEM]):
        if len(set(styles)) > 1:
            return None  # a level added to a read written two ways: how to write it is not known
        styles.append(styles[0])
    indexes = iter(value for kind, value, _ in steps if kind == "index")
    fields = iter(styles)
    rebuilt: list[tuple[str, str, str]] = []
    for s in path:
        if s == ITEM:
            rebuilt.append(("index", next(indexes, "0"), ""))
        else:
            rebuilt.append(("field", str(s), next(fields)))
    if next(indexes, None) is not None:
        return None  # the model indexed something the documented path does not hold
    if format_path(path) == format_path(_schema_path(steps)):
        return None
    return _written(root, rebuilt)


def _fits(written: list[str], documented: list[Any]) -> bool:
    """Whether ``documented`` (field names) is ``written`` with one level left out added
    (the same fields in order, the same last one, one more), or with one field
    misspelt. Two levels left out could be read several ways (``items[].id`` in a search:
    ``albums.items[].id`` or ``tracks.items[].album.id``): not certain."""
    if not documented or (documented[-1] != written[-1] and len(documented) != len(written)):
        return False
    if len(documented) == len(written):
        diff = [(w, d) for w, d in zip(written, documented, strict=True) if w != d]
        return len(diff) == 1 and _misspelt(*diff[0])
    if len(documented) != len(written) + 1 or documented[-1] != written[-1]:
        return False
    rest = iter(documented)
    return all(any(w == d for d in rest) for w in written)


def _misspelt(written: str, documented: str) -> bool:
    # a response field read under another spelling, a slip or its plural (``b.book`` for
    # ``b.books``): reading a field changes nothing, so a plural is no other effect here
    return (
        same_words(written, documented)
        or slip(written, documented)
        or plural_pair(written.lower(), documented.lower())
    )


def _reference(
    checker: SequenceChecker,
    variables: Mapping[str, str],
    op: Operation,
    param: str,
    instruction: str | None = None,
) -> str | None:
    """E5.3 in a program: the one earlier step whose documented response has the field
    that produces ``param``, written as a read of it (``b.books[0].id``)."""
    p = op.parameter(param)
    if p is None:
        return None
    types = p.schema.get("type") if isinstance(p.schema, Mapping) else None
    if types == "array" or (isinstance(types, list) and "array" in types):
        return None  # a list parameter: which items is not certain
    producers = checker.producers(op.name, param)
    called = set(variables.values())
    # a producer no earlier step calls and that takes no argument is as likely the call
    # the program left out (the one _insert_producer would insert): a called step's
    # field must win clearly over it too (a user's top tracks hold ids; the user's own
    # id comes from GET /me). One that needs arguments the model did not choose to call.
    uncalled = max(
        (
            float(x.score)
            for x in producers
            if x.operation not in called and _takes_nothing(checker, x.operation)
        ),
        default=0.0,
    )
    found: set[str] = set()
    for var, function in variables.items():
        # this step's fields of that kind, best first: the best must win clearly (a weak
        # one, such as a bare ``id``, only counts against the others)
        fields = sorted(
            (x for x in producers if x.operation == function), key=lambda x: -float(x.score)
        )
        if not fields or getattr(fields[0], "via", "") == "weak":
            continue
        if not _clear_best(fields) or float(fields[0].score) - uncalled < FIELD_MARGIN:
            return None
        steps = parse_path(fields[0].path)
        if not first_item_sure(instruction, steps.count(ITEM)):
            return None
        found.add(_read_first(var, steps))
    if len(found) != 1:
        return None
    return next(iter(found))


def _read_first(var: str, steps: Sequence[Any]) -> str:
    """A program's read of a response path from ``var``, each list's first item:
    ``("books", ITEM, "id")`` -> ``b.books[0].id``."""
    return var + "".join(
        "[0]" if s == ITEM else f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps
    )
