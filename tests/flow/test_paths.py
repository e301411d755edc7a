"""Paths into response schemas: walking, listing and the closest documented path."""

from __future__ import annotations

from typing import Any

import pytest

from autofeedback.flow import format_path, iter_paths, parse_path
from autofeedback.sequences import closest_path, schema_at

SEARCH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "page": {"type": "integer"},
        "results": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "object", "properties": {"id": {"type": "integer"}}},
                    {"type": "object", "properties": {"name": {"type": "string"}}},
                ]
            },
        },
        "meta": {"type": "object", "additionalProperties": {"type": "string"}},
        "tracks": {
            "allOf": [
                {
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "items": {"type": "object", "properties": {"uri": {"type": "string"}}},
                        }
                    },
                }
            ]
        },
    },
}


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("results[0].id", ["results", 0, "id"]),
        ("tracks.items[].uri", ["tracks", "items", "[]", "uri"]),
        ("[].name", ["[]", "name"]),
        ("token", ["token"]),
    ],
)
def test_parse_and_format_round_trip(text: str, steps: list[Any]) -> None:
    assert parse_path(text) == steps
    assert format_path(steps) == text


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (["results", 0, "id"], {"type": "integer"}),
        ("results[].name", {"type": "string"}),  # a property of another anyOf branch
        ("tracks.items[3].uri", {"type": "string"}),  # through allOf
        ("meta.anything", {"type": "string"}),  # additionalProperties
        ("result[0].id", None),
        ("page.id", None),
        ("results.id", None),  # a list has no property `id`
        ("page[0]", None),
    ],
)
def test_schema_at(path: Any, expected: Any) -> None:
    assert schema_at(SEARCH, path) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("result[0].id", "results[].id"),
        (["results", "id"], "results[].id"),  # forgot the index
        ("results[0].idd", "results[].id"),
        ("track.items[0].url", "tracks.items[].uri"),
        ("page[0]", "page"),  # an index into a number is dropped
        ("results[0].popularity", None),
    ],
)
def test_closest_path(path: Any, expected: str | None) -> None:
    assert closest_path(SEARCH, path) == expected


def test_iter_paths_lists_every_position_and_stops_on_cycles() -> None:
    paths = [format_path(p) for p, _ in iter_paths(SEARCH)]
    assert "results[].id" in paths and "tracks.items[].uri" in paths
    node: dict[str, Any] = {"type": "object", "properties": {"id": {"type": "integer"}}}
    node["properties"]["parent"] = node  # a recursive schema
    listed = [format_path(p) for p, _ in iter_paths(node)]
    assert listed == ["id", "parent"]  # listed once, not walked again
