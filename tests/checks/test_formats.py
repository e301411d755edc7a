"""The asserted formats: jsonschema's 2020-12 checkers, corrected where the
JSON-Schema-Test-Suite showed them wrong, and only formats whose checker refuses no
valid value."""

from __future__ import annotations

import jsonschema_rs
import pytest

from autofeedback import ApiCatalog
from autofeedback.checks._check_values import _per_object, _strict, accepts
from autofeedback.checks._formats import ASSERTED, FORMATS


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
