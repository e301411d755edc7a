"""An array argument described as "a comma-separated list" takes that text form too
(GraphQL-RestBench's Spotify ``type``: documented as an array, described as "A
comma-separated list of item types", written ``type="album"`` by its gold programs and
sent that way to the real API). Each item is still checked against the items' schema."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner


def _scanner(description: str) -> Scanner:
    tool = {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the catalogue.",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string"},
                    "type": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["album", "track", "artist"]},
                        "description": description,
                    },
                },
                "required": ["q", "type"],
            },
        },
    }
    return Scanner(ApiCatalog.from_obj([tool]), retriever=None)


def _codes(scanner: Scanner, value: Any) -> list[str]:
    call = {"name": "search", "arguments": {"q": "Mojito", "type": value}}
    return [f.code for f in scanner.iter_findings(call) if f.severity == "error"]


COMMA = "A comma-separated list of item types to search across."


@pytest.mark.parametrize("value", ["album", "album,track", ["album", "track"]])
def test_the_described_text_form_is_accepted(value: Any) -> None:
    assert _codes(_scanner(COMMA), value) == []


def test_each_item_of_the_text_is_still_checked() -> None:
    assert _codes(_scanner(COMMA), "album,podcast") == ["E4.2"]


def test_without_that_description_a_string_is_still_a_type_mismatch() -> None:
    assert _codes(_scanner("Item types to search across."), "album") == ["E4.1"]


def test_an_array_without_items_described_as_comma_separated(shared_data_dir: Any) -> None:
    # the GraphQL-RestBench function spec itself: `type` has no items schema, and the
    # program goes through the sequence checker (the whole call as one body)
    import json

    from autofeedback.flow import sequence_from_program
    from autofeedback.scanner._sequences import SequenceChecker

    rows = [
        json.loads(line)
        for line in (shared_data_dir / "graphqlrestbench" / "train.jsonl").read_text().splitlines()
    ]
    row = rows[29]  # "add the album Mojito to my library": GET_search(type="album")
    catalog = ApiCatalog.from_obj(row["function_specs"])
    checker = SequenceChecker(Scanner(catalog, retriever=None))
    gold = sequence_from_program(row["output"], instruction=row["utterance"])
    assert [f.code for f in checker.check(gold) if f.code.startswith("E4")] == []
