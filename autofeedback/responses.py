"""Responses: what a spec documents for an operation's answers, and an explanation of a
live API's error response in the spec's words.

>>> from autofeedback.responses import explain_response
>>> explain_response.__name__
'explain_response'
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

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


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "DocumentedResponse",
    "Explanation",
    "Requirement",
    "explain_response",
]
