"""autofeedback: static and dynamic feedback for LLM-generated API requests.

>>> from autofeedback import ApiCatalog, scan
>>> catalog = ApiCatalog.from_tools([{"name": "userLogin", "parameters": {
...     "type": "object", "properties": {"user_name": {"type": "string"}}}}])
>>> print(scan("<API>user_login(user_name='ann')</API>", catalog, retriever=None))
E2.2 api: API 'user_login' does not exist; it is a spelling variant of 'userLogin'
"""

from autofeedback._audit import AuditResult, AuditSummary, audit_lines
from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import (
    AutoFeedbackError,
    ConfigurationError,
    HostNotAllowed,
    SpecError,
    ToolCallRejected,
)
from autofeedback._feedback import render_feedback
from autofeedback._findings import CODES, Finding, Severity
from autofeedback._model import ApiRequest, Operation, Parameter, Response
from autofeedback._scan import Scanner, iter_findings, scan

__all__ = [
    "CODES",
    "ApiCatalog",
    "ApiRequest",
    "AuditResult",
    "AuditSummary",
    "AutoFeedbackError",
    "ConfigurationError",
    "Finding",
    "HostNotAllowed",
    "Operation",
    "Parameter",
    "Response",
    "Scanner",
    "Severity",
    "SpecError",
    "ToolCallRejected",
    "audit_lines",
    "iter_findings",
    "render_feedback",
    "scan",
]
