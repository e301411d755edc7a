"""The formats E4.2 asserts, each checked by a kept implementation.

An API request with a malformed ``date`` is wrong, so formats are asserted (the drafts
make them annotations). Each asserted format is checked by jsonschema's draft 2020-12
format checker, which uses the ``jsonschema[format]`` packages (rfc3339-validator,
fqdn, idna, rfc3987, isoduration, jsonpointer), with three corrections measured on the
JSON-Schema-Test-Suite's ``optional/format`` files:

* a value with a control character (a trailing newline) is refused for the formats none
  of whose values has one: the libraries match with Python's ``$``, which allows it;
* ``time`` and ``date-time`` accept a leap second (``23:59:60Z``, at 23:59 UTC), which
  rfc3339-validator refuses;
* ``regex`` is an ECMA-262 regular expression (:mod:`autofeedback.core._patterns`), not a
  Python one; ``uuid`` is the RFC 4122 text form only (hex digits, four hyphens).

Formats whose kept checker refuses valid values (``iri``: an uppercase IPvFuture;
``relative-json-pointer``: ``100``; ``uri-template``: ``{%41}``) are not asserted, nor
formats no checker knows: a check that refuses a valid value tells a correct model that
it is wrong. :data:`ASSERTED` lists the others; docs/specs.md repeats it.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import re
import uuid
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from autofeedback.core._patterns import is_valid

if TYPE_CHECKING:
    from jsonschema import FormatChecker

__all__ = ["ASSERTED", "FORMATS", "light_check"]

#: The formats E4.2 asserts.
ASSERTED = (
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "iri-reference",
    "json-pointer",
    "regex",
    "time",
    "uri",
    "uri-reference",
    "uuid",
)
# none of their values holds a control character
_NO_CONTROLS = frozenset(ASSERTED) - {"json-pointer", "regex", "email", "idn-email"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LEAP = re.compile(
    r"(?:\d{4}-\d\d-\d\d[Tt ])?(\d\d):(\d\d):60(\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))", re.ASCII
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", re.ASCII)


def _leap_second(check: Callable[[Any], Any], value: Any) -> bool:
    """``check(value)``, also true for a leap second, which is only ever at 23:59:60 UTC."""
    m = _LEAP.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return bool(check(value))
    hour, minute, _, sign, off_h, off_m = m.groups()
    offset = 0 if sign is None else (int(off_h) * 60 + int(off_m)) * (1 if sign == "+" else -1)
    if int(off_h or 0) > 23 or int(off_m or 0) > 59:
        return False
    utc = (int(hour) * 60 + int(minute) - offset) % 1440
    if utc != 23 * 60 + 59 or int(hour) > 23 or int(minute) > 59:
        return False
    return bool(check(value[: m.start(1) + 6] + "59" + value[m.start(1) + 8 :]))


def _build() -> FormatChecker:
    from jsonschema import Draft202012Validator, FormatChecker

    kept = Draft202012Validator.FORMAT_CHECKER.checkers
    checker = FormatChecker(formats=())
    for name in ASSERTED:
        if name not in kept:
            continue  # its package is not installed: not asserted
        func, raises = kept[name]
        if name in ("time", "date-time"):
            func = partial(_leap_second, func)
        elif name == "regex":
            func = _ecma_regex
        elif name == "uuid":
            func = partial(_uuid, func)
        if name in _NO_CONTROLS:
            func = partial(_no_controls, func)
        checker.checkers[name] = (func, raises)
    return checker


def _ecma_regex(value: Any) -> bool:
    return not isinstance(value, str) or is_valid(value)


def _uuid(check: Callable[[Any], Any], value: Any) -> bool:
    return not isinstance(value, str) or (_UUID.fullmatch(value) is not None and bool(check(value)))


def _no_controls(check: Callable[[Any], Any], value: Any) -> bool:
    return not (isinstance(value, str) and _CONTROL.search(value)) and bool(check(value))


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)


def _date(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE.fullmatch(value) and _dt.date.fromisoformat(value))
    except ValueError:
        return False


def _ip(version: int, value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        if version == 4:
            return bool(ipaddress.IPv4Address(value))
        return not getattr(ipaddress.IPv6Address(value), "scope_id", "")
    except ipaddress.AddressValueError:
        return False


def _uuid_text(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(value[position] == "-" for position in (8, 13, 18, 23))


def _email(value: Any) -> bool:
    return not isinstance(value, str) or "@" in value


#: The asserted formats whose check needs only the standard library, written as
#: jsonschema's checkers are (its ``_format`` module) with this module's corrections:
#: the compiled fast path checks these without importing python-jsonschema and its
#: format packages (most of a short audit's start-up); tests/checks/test_formats.py
#: holds each to :data:`FORMATS` on the JSON-Schema-Test-Suite's values.
_LIGHT: dict[str, Callable[[Any], bool]] = {
    "date": partial(_no_controls, _date),
    "email": _email,
    "idn-email": _email,
    "ipv4": partial(_no_controls, partial(_ip, 4)),
    "ipv6": partial(_no_controls, partial(_ip, 6)),
    "uuid": partial(_no_controls, partial(_uuid, _uuid_text)),
    "regex": _ecma_regex,
}


def light_check(name: str) -> Callable[[Any], bool] | None:
    """The stdlib-only checker of the asserted format ``name``, if it has one; it
    answers as ``FORMATS.conforms(value, name)`` does.

    >>> light_check("date")("2024-02-30"), light_check("hostname")
    (False, None)
    """
    return _LIGHT.get(name)


def __getattr__(name: str) -> Any:
    # FORMATS: built on first use; jsonschema's format packages (date, URI, IDN parsers)
    # are most of the cost of importing it, and a call without a format needs none
    if name == "FORMATS":
        checker = globals()["FORMATS"] = _build()
        return checker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    #: The format checker of the E4 checks (and of the fast path).
    FORMATS: FormatChecker
