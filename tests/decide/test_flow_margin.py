"""Which response field a data-flow repair reads: the best one only when it is clearly
the best (``FIELD_MARGIN`` above the next, the margin itself included) and no weak guess."""

from __future__ import annotations

from typing import NamedTuple

from autofeedback.decide._flow import FIELD_MARGIN, _clear_best


class Field(NamedTuple):
    path: str
    score: float
    via: str = "name"


def test_the_best_field_is_clear_at_the_margin_and_not_below_it() -> None:
    assert _clear_best([Field("id", FIELD_MARGIN), Field("isbn", 0.0)])
    assert not _clear_best([Field("id", FIELD_MARGIN), Field("isbn", FIELD_MARGIN / 2)])
    assert _clear_best([Field("id", 0.2)])  # alone
    assert not _clear_best([Field("id", 0.9, via="weak")])
    assert not _clear_best([])
