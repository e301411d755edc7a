"""The instruction counter of ``speed.py --only-instructions`` reads cachegrind's count,
and the count is what makes that table worth having: the same process gives the same
number whatever else the machine is doing."""

from __future__ import annotations

import shutil
import sys

import pytest

from benchmarks._instructions import count

pytestmark = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed"
)


def test_the_same_process_counts_the_same_instructions() -> None:
    small = [count([sys.executable, "-S", "-c", "pass"]) for _ in range(2)]
    more = count([sys.executable, "-S", "-c", "sum(range(2_000_000))"])
    assert small[0] > 1_000_000
    assert abs(small[0] - small[1]) < 0.01 * small[0]
    assert more > small[0] + 10_000_000  # two million additions are counted


def test_a_process_that_cannot_run_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="no instruction count"):
        count(["/nonexistent/python"])
