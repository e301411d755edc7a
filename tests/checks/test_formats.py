"""The asserted formats: jsonschema's 2020-12 checkers, corrected where the
JSON-Schema-Test-Suite showed them wrong, and only formats whose checker refuses no
valid value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs
import pytest

from autofeedback import ApiCatalog
from autofeedback.checks import _formats
from autofeedback.checks._check_values import _per_object, _strict, accepts
from autofeedback.checks._formats import ASSERTED, FORMATS, light_check

if TYPE_CHECKING:
    from jsonschema import FormatChecker


@pytest.fixture
def built() -> FormatChecker:
    """A checker built for each test as :data:`FORMATS` is on its first use: FORMATS
    itself is built once a process, before a mutation test switches a mutant of the
    builder on (and mutmut gives a mutant only the tests that called it)."""
    return _formats._build()


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
        # a leap second: a fraction, a zone west of UTC; an offset, an hour or a minute
        # out of range is refused even where the arithmetic lands on 23:59 UTC
        ("time", "23:59:60.5Z", True),
        ("time", "15:59:60-08:00", True),
        ("time", "00:59:60+01:00", True),
        ("date-time", "1998-12-31T23:59:60z", True),
        ("time", "23:59:60+01:00", False),
        ("time", "23:59:60+00:60", False),
        ("time", "23:59:60+24:00", False),
        ("time", "24:59:60+01:00", False),
        ("time", "23:60:60+00:01", False),
        ("time", "23:59:60Z\n", False),
        ("time", "22:59:60+23:00", True),  # the widest offsets
        ("time", "00:58:60+00:59", True),
        ("time", "25:00:00Z", False),  # not a leap second: the kept checker's answer
        ("date-time", "1998-02-30T23:59:60Z", False),  # a leap second on no such day
        ("uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", True),
        ("uuid", "2eb8aa08aa9811eab4aa73b441d16380", False),
        # a trailing newline, refused where no value of the format has one
        ("ipv4", "1.2.3.4\n", False),
        ("ipv6", "::1\n", False),
        ("date", "2020-01-01\n", False),
        ("duration", "P1Y\n", False),
        ("email", "a\n@b", True),
        ("json-pointer", "/a\nb", True),
        # a checker that raises for a bad value answers False
        ("duration", "P1Y", True),
        ("duration", "1Y", False),
        ("ipv4", "1.2.3", False),
    ],
)
def test_asserted_formats(fmt: str, value: str, ok: bool, built: FormatChecker) -> None:
    assert fmt in ASSERTED
    assert FORMATS.conforms(value, fmt) is ok
    assert built.conforms(value, fmt) is ok


@pytest.mark.parametrize("fmt", ["time", "date-time", "uuid", "ipv4", "date", "regex"])
def test_a_value_that_is_not_text_conforms_to_every_format(fmt: str, built: FormatChecker) -> None:
    for value in (5, None, [1]):
        assert built.conforms(value, fmt)


def test_every_asserted_format_is_checked(built: FormatChecker) -> None:
    assert set(built.checkers) == set(FORMATS.checkers) == set(ASSERTED)


def test_the_checker_is_built_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(vars(_formats), "FORMATS")
    checker = _formats.FORMATS
    assert vars(_formats)["FORMATS"] is checker  # built once, then kept
    assert set(checker.checkers) == set(ASSERTED)
    with pytest.raises(AttributeError, match="has no attribute 'NOPE'"):
        _formats.NOPE  # noqa: B018


@pytest.mark.parametrize("fmt", ["iri", "relative-json-pointer", "uri-template", "int32"])
def test_formats_whose_checker_refuses_valid_values_are_not_asserted(
    fmt: str, built: FormatChecker
) -> None:
    assert fmt not in ASSERTED
    assert FORMATS.conforms("100", fmt)
    assert built.conforms("100", fmt)


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
