"""How a composed body's shapes are named in findings (``(as NAME)``): by their title,
else by the reference a recursive or truncated shape was loaded from, else by number."""

from __future__ import annotations

import pytest

from autofeedback.checks._branches import _branch_name


@pytest.mark.parametrize(
    ("branch", "name"),
    [
        ({"title": "Debit card"}, "Debit card"),
        ({"title": "cards/debit/Visa"}, "Visa"),  # a title that is a path: its last part
        ({"x-recursive-ref": "#/components/schemas/Node"}, "Node"),
        ({"x-truncated-ref": "#/components/schemas/Deep"}, "Deep"),
        ({"title": 7, "x-truncated-ref": "#/components/schemas/Deep"}, "Deep"),
        ({"type": "object"}, "branch 2"),
        ("not a schema", "branch 2"),
    ],
)
def test_a_shape_is_named_by_title_then_by_its_reference(branch: object, name: str) -> None:
    assert _branch_name(branch, 1) == name
