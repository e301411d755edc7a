"""Sequences and programs a client or a capture can send must cost time linear in their
size (issue 29, item 5 and the HAR session): no step redoes the work of all earlier
ones, and no value holds more references than were written."""

from __future__ import annotations

import time

from autofeedback import ApiCatalog, Scanner
from autofeedback.core._model import ApiRequest
from autofeedback.flow._program import MAX_PARTS, Derived, parse_program
from autofeedback.flow._sequence import Sequence, Step, StepResponse, sequence_from_program
from autofeedback.scanner._scan import check_sequence
from autofeedback.scanner._sequences import SequenceChecker

TOOLS = [
    {
        "name": "find",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
    {
        "name": "get",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    },
]


def _doubling(lines: int, form: str) -> str:
    out = ['v0 = find(q="x")']
    for i in range(1, lines):
        prev = f"v{i - 1}"
        out.append(
            f"v{i} = [{prev}, {prev}]" if form == "list" else f'v{i} = f"{{{prev}}}{{{prev}}}"'
        )
    out.append(f"get(id=v{lines - 1})")
    return "\n".join(out)


def test_a_value_built_from_itself_keeps_each_reference_once() -> None:
    """`v{i} = [v{i-1}, v{i-1}]` doubled the references per line: 2**20 of them here
    (24 lines took 43 s and 450 MB in scan, the audit and the loop)."""
    for form in ("list", "fstring"):
        calls, problems = parse_program(_doubling(21, form))
        assert problems == []
        value = calls[-1].arguments["id"]
        assert isinstance(value, Derived)
        assert len(value.parts) == 1 and value.parts[0].var == "v0"
        catalog = ApiCatalog.from_tools(TOOLS)
        found = check_sequence(sequence_from_program(_doubling(21, form)), catalog, retriever=None)
        assert len(found) <= 2, found


def test_references_per_value_are_bounded() -> None:
    names = [f"r{i}" for i in range(200)]
    text = "\n".join(f"{n} = find(q='x')" for n in names)
    text += "\nget(id=[" + ", ".join(f"{n}.id" for n in names) + "])"
    calls, _ = parse_program(text)
    value = calls[-1].arguments["id"]
    assert isinstance(value, Derived) and len(value.parts) == MAX_PARTS
    assert [p.var for p in value.parts] == names[:MAX_PARTS]  # the first ones, in order


def test_a_long_session_is_checked_in_linear_time() -> None:
    """Each step used to rebuild the set of operations called before it: quadratic (a
    40,000-entry HAR session took 65 s, 100,000 did not finish). The bound is far above
    the linear time (about 3 s here) and far below the quadratic one (minutes)."""
    checker = SequenceChecker(Scanner(ApiCatalog.from_tools(TOOLS), retriever=None))
    steps = tuple(
        Step(i, ApiRequest(name="find", arguments={"q": "x"}), response=StepResponse(200, {}))
        for i in range(30_000)
    )
    started = time.perf_counter()
    found = checker.check(Sequence(steps))
    assert time.perf_counter() - started < 60
    assert found == []
