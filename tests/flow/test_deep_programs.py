"""A program line nested too deep to read (``y = b.x.x...``, 400 or 5,000 fields) is that
line's E1, and the calls around it are still checked. Before, 400 levels parsed and then
overflowed the recursion of the readers after it (``ast.unparse``): ``decide_program``
raised ``RecursionError`` and the scanner reported the program clean; at 5,000 levels the
line, with no ``(``, was taken for prose and dropped, and the scanner reported it clean."""

from __future__ import annotations

import pytest

from autofeedback import ApiCatalog, Scanner
from autofeedback.decide import Decider

TOOLS = [
    {"name": "get_books", "parameters": {"type": "object", "properties": {}}},
    {
        "name": "get_book",
        "parameters": {
            "type": "object",
            "properties": {"book_id": {"type": "integer"}},
            "required": ["book_id"],
        },
    },
]


@pytest.mark.parametrize(
    ("depth", "reason"),
    [(400, "it nests deeper than 100 levels"), (5000, "RecursionError")],
)
def test_a_line_too_deep_to_read_is_its_own_e1(depth: int, reason: str) -> None:
    program = "b = get_books()\ny = b" + ".x" * depth + "\nget_book(book_id=y)\n"
    scanner = Scanner(ApiCatalog.from_tools(TOOLS), retriever=None)
    expected = [
        ("E1", ("line[2]",), f"this part of the program cannot be parsed: {reason}"),
        ("E5.1", ("step[1]", "argument", "book_id"), "'y' is not the result of an earlier call"),
    ]
    assert [(f.code, f.location, f.message) for f in scanner.iter_findings(program)] == expected
    decided = Decider(scanner).decide_program(program)
    assert [(f.code, f.location) for f in decided.findings] == [e[:2] for e in expected]


def test_a_deep_but_readable_program_is_read() -> None:
    program = "b = get_books()\ny = b" + ".x" * 90 + "\nget_book(book_id=y)\n"
    scanner = Scanner(ApiCatalog.from_tools(TOOLS), retriever=None)
    assert list(scanner.iter_findings(program)) == []
