"""autofeedback: static and dynamic feedback for LLM-generated API requests."""

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import (
    AutoFeedbackError,
    ConfigurationError,
    HostNotAllowed,
    SpecError,
    ToolCallRejected,
)
from autofeedback._findings import CODES, Finding
from autofeedback._model import ApiRequest, Operation, Parameter, Response

__all__ = [
    "CODES",
    "ApiCatalog",
    "ApiRequest",
    "AutoFeedbackError",
    "ConfigurationError",
    "Finding",
    "HostNotAllowed",
    "Operation",
    "Parameter",
    "Response",
    "SpecError",
    "ToolCallRejected",
]
