"""Responses: what a spec documents for an operation's answers, and an explanation of a
live API's error response in the spec's words.

>>> from autofeedback.responses import explain_response
>>> explain_response.__name__
'explain_response'
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from autofeedback.checks._check_response import DocumentedResponse, Requirement
    from autofeedback.loop._explain import Explanation, explain_response

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "DocumentedResponse": "autofeedback.checks._check_response",
    "Requirement": "autofeedback.checks._check_response",
    "Explanation": "autofeedback.loop._explain",
    "explain_response": "autofeedback.loop._explain",
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
    "DocumentedResponse",
    "Explanation",
    "Requirement",
    "explain_response",
]
