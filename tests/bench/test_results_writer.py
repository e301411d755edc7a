"""benchmarks/_results.py: a benchmark rewrites its own section of RESULTS.md, and the
notes a person wrote below the by-hand line survive the rewrite."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks._results import BY_HAND, write_section  # noqa: E402


def test_a_rerun_replaces_the_table_and_keeps_the_notes_by_hand(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    write_section("A", "python a.py", "| x |\n|---|\n| 1 |", path=results)
    write_section("B", "python b.py", "b", path=results)
    text = results.read_text(encoding="utf-8")
    results.write_text(text.replace("| 1 |\n", f"| 1 |\n\n{BY_HAND}\nWhy 1: a note.\n"))

    write_section("A", "python a.py --more", "| x |\n|---|\n| 2 |", path=results)
    text = results.read_text(encoding="utf-8")
    assert "| 1 |" not in text and "python a.py --more" in text
    assert text.index("| 2 |") < text.index(BY_HAND) < text.index("Why 1: a note.")
    assert text.index("Why 1: a note.") < text.index("## B")
    assert text.count(BY_HAND) == 1

    # a section without the line is the script's alone, as before
    write_section("B", "python b.py", "b again", path=results)
    assert "## B\n\n```\npython b.py\n```\n\nb again\n" in results.read_text(encoding="utf-8")
