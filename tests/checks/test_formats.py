"""The asserted formats: jsonschema's 2020-12 checkers, corrected where the
JSON-Schema-Test-Suite showed them wrong, and only formats whose checker refuses no
valid value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from autofeedback import ApiCatalog
from autofeedback.checks._check_values import _per_object, _strict, accepts
from autofeedback.checks._formats import ASSERTED, FORMATS, light_check


@pytest.mark.parametrize(
    ("fmt", "value", "ok"),
    [
        ("time", "08:30:06Z", True),  # FormatChecker() took draft 3's %H:%M:%S and refused it
        ("time", "23:59:60Z", True),  # a leap second
        ("time", "01:29:60+01:30", True),  # 23:59:60 UTC
        ("time", "22:59:60Z", False),  # not at the end of a UTC day
        ("date-time", "1998-12-31T15:59:60.123-08:00", True),
        ("date-time", "1998-12-31T23:58:60Z", False),
        ("date-time", "1985-04-12T23:20:50Z\n", False),  # Python's $ let it through
        ("hostname", "example.com\n", False),
        ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", True),
        ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1_380", False),
        ("regex", "(?<name>x)\\k<name>", True),  # ECMA-262, not Python
        ("regex", "(?P<name>x)", False),
        ("regex", "[^]", True),
    ],
)
def test_asserted_formats(fmt: str, value: str, ok: bool) -> None:
    assert fmt in ASSERTED
    assert FORMATS.conforms(value, fmt) is ok


@pytest.mark.parametrize("fmt", ["iri", "relative-json-pointer", "uri-template", "int32"])
def test_formats_whose_checker_refuses_valid_values_are_not_asserted(fmt: str) -> None:
    assert fmt not in ASSERTED
    assert FORMATS.conforms("100", fmt)


def test_a_format_that_is_not_asserted_keeps_the_fast_path() -> None:
    tool = {
        "name": "f",
        "parameters": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "int32"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            },
        },
    }
    op = ApiCatalog.from_tools([tool]).operations[0]
    assert accepts(op, {"n": 5, "code": "ABC"})
    assert not accepts(op, {"n": 5, "code": "abc"})
    # compiled by jsonschema-rs, not left to jsonschema for an unknown format name
    compiled = _per_object(_strict, op, lambda _: None)
    assert type(compiled).__module__ == jsonschema_rs.__name__


def test_the_stdlib_checkers_answer_as_the_asserted_formats(shared_data_dir: Path) -> None:
    """The fast path checks a few formats without python-jsonschema; each must give
    :data:`FORMATS`' answer on every value the JSON-Schema-Test-Suite tries it with,
    and on the hard cases below."""
    folder = shared_data_dir / "json-schema-test-suite" / "tests" / "draft2020-12"
    values: dict[str, list[Any]] = {}
    for path in sorted(folder.rglob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            schema = case.get("schema")
            fmt = schema.get("format") if isinstance(schema, dict) else None
            if isinstance(fmt, str):
                values.setdefault(fmt, []).extend(t["data"] for t in case["tests"])
    hard = [
        "2024-02-30", "2024-02-29", "2023-02-29", "2020-01-01\n", "٢٠٢٠-01-01", "2020-1-01",
        "a@b", "@", "", "1.2.3.4", "01.2.3.4", "1.2.3.4\n", "::1", "fe80::1%eth0", "::ffff:1.2.3.4",
        "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2eb8aa08aa9811eab4aa73b441d16380",
        "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}", "urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380",
        "(?<name>x)\\k<name>", "(?P<name>x)", "[^]", 5, None, [1],
    ]  # fmt: skip
    checked = 0
    for fmt in ASSERTED:
        light = light_check(fmt)
        if light is None:
            continue
        for value in [*values.get(fmt, []), *hard]:
            assert light(value) is FORMATS.conforms(value, fmt), (fmt, value)
            checked += 1
    assert checked > 100
