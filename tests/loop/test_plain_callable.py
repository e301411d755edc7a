"""The feedback loop takes a plain callable as its model (issue 19, point 9): a function
of the messages returning the text, no client class needed."""

from __future__ import annotations

from pathlib import Path

from autofeedback import ApiCatalog, FeedbackLoop
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]


def test_feedback_loop_takes_a_plain_callable(terse_bookshop: Sandbox) -> None:
    def model(messages: list[dict[str, str]]) -> str:
        return "<API>searchBooks(query='dune')</API>"

    catalog = ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml")
    result = FeedbackLoop(model, catalog, base_url=terse_bookshop.url).run("Find books about dune")
    assert result.success and result.status == 200
