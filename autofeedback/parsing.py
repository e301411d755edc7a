"""Reading what a model wrote (stage E1): every request format the supported benchmarks
and agent frameworks produce, found anywhere in the text.

>>> from autofeedback.parsing import parse_output
>>> [r.name for r in parse_output("<API>ping(host='a')</API>").requests]
['ping']
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from autofeedback._parse import (
        ParseResult,
        RequestFormatError,
        parse_output,
        request_from_call,
        request_from_http,
    )

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "ParseResult": "autofeedback._parse",
    "RequestFormatError": "autofeedback._parse",
    "parse_output": "autofeedback._parse",
    "request_from_call": "autofeedback._parse",
    "request_from_http": "autofeedback._parse",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ParseResult",
    "RequestFormatError",
    "parse_output",
    "request_from_call",
    "request_from_http",
]
