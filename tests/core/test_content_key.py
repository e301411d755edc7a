"""``content_key``: the key every in-memory cache of tool lists uses (audit, proxy,
framework doors). Equal keys must mean equal values, types included: a key shared by two
different tool lists would check one list's calls against the other's schemas."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest

from autofeedback.core._cache import content_key

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]


def test_the_same_list_parsed_twice_has_one_key() -> None:
    text = json.dumps(TOOLS)
    assert content_key(json.loads(text)) == content_key(json.loads(text))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1], [1.0]),
        ([1], [True]),
        ([0], [False]),
        ([None], ["null"]),
        (["1"], [1]),
        ({"a": [1, 2]}, {"a": [2, 1]}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # order is part of the key: a miss, never a mix-up
        ([{"required": ["city"]}], [{"required": ["city", "days"]}]),
        (["caf\u00e9"], ["cafe\u0301"]),
    ],
)
def test_different_values_have_different_keys(a: object, b: object) -> None:
    assert content_key(a)[0] != content_key(b)[0]


def test_a_value_marshal_cannot_write_is_keyed_by_its_json_text() -> None:
    # a dict subclass (a framework's own mapping) is no marshal type
    ordered = OrderedDict(TOOLS[0])
    key, size = content_key([ordered])
    assert key == content_key([OrderedDict(TOOLS[0])])[0]
    assert key != content_key([dict(TOOLS[0])])[0]  # one key space per writer
    assert size == len(json.dumps([ordered], sort_keys=True)) + 1


def test_the_size_is_what_the_key_stands_for() -> None:
    small, big = content_key(TOOLS)[1], content_key(TOOLS * 100)[1]
    assert 0 < small < big
    assert big > 50 * small


def test_lone_surrogates_are_keyed() -> None:
    # a JSON log may hold "\\ud800"; json.loads gives a lone surrogate
    value = json.loads('["\\ud800"]')
    assert content_key(value) == content_key(json.loads('["\\ud800"]'))
    assert content_key(value)[0] != content_key(["\ufffd"])[0]


def test_shared_objects_are_keyed_as_copies() -> None:
    # a Python caller may repeat one schema object; a parsed log holds copies
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    shared = [{"name": "a", "parameters": schema}, {"name": "b", "parameters": schema}]
    copies = json.loads(json.dumps(shared))
    assert content_key(shared) == content_key(copies)
