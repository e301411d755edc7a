"""Reading what a model wrote (stage E1): every request format the supported benchmarks
and agent frameworks produce, found anywhere in the text.

>>> from autofeedback.parsing import parse_output
>>> [r.name for r in parse_output("<API>ping(host='a')</API>").requests]
['ping']
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

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


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "ParseResult",
    "RequestFormatError",
    "parse_output",
    "request_from_call",
    "request_from_http",
]
