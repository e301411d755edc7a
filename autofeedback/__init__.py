"""autofeedback: static and dynamic feedback for LLM-generated API requests.

>>> from autofeedback import ApiCatalog, scan
>>> catalog = ApiCatalog.from_tools([{"name": "userLogin", "parameters": {
...     "type": "object", "properties": {"user_name": {"type": "string"}}}}])
>>> print(scan("<API>user_login(user_name='ann')</API>", catalog, retriever=None))
E2.2 api: API 'user_login' does not exist; it is a spelling variant of 'userLogin'

The top holds what most users need: the catalog and its model, scanning, the audit, the
guards, the decision, the feedback loop, findings and the exceptions. The rest lives in
modules that say what it is: :mod:`autofeedback.llm` (LLM clients),
:mod:`autofeedback.proxy` (the OpenAI-compatible and MCP proxies),
:mod:`autofeedback.sequences` (sequences of calls, data flow, program scores),
:mod:`autofeedback.sandbox` (the sandbox and the OpenAPI export),
:mod:`autofeedback.runners` (task runners), :mod:`autofeedback.responses` (documented
responses, explanations), :mod:`autofeedback.frameworks` (agent-framework adapters) and
:mod:`autofeedback.parsing` (reading model output). Their old names here still work for
one release, with a :class:`DeprecationWarning` naming the new home.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from autofeedback.core._exceptions import (
    AutoFeedbackError,
    ConfigurationError,
    FileNotRead,
    HostNotAllowed,
    SpecError,
    SpecWarning,
    ToolCallRejected,
)

__version__ = "0.1.0"  # setup.cfg reads it (version = attr: autofeedback.__version__)

if _TYPE_CHECKING:
    from autofeedback._specs._regexes import InvalidPatternWarning
    from autofeedback._specs._remote import RemoteRefs
    from autofeedback.audit._audit import AuditResult, AuditSummary, audit_lines
    from autofeedback.catalog._catalog import ApiCatalog
    from autofeedback.core._findings import CODES, Finding, Repair, Severity
    from autofeedback.core._model import ApiRequest, Operation, Parameter, Response
    from autofeedback.decide import Decider, Decision, Policy, Session
    from autofeedback.decide._feedback import render_feedback
    from autofeedback.integrations._adapter import (
        AutoFeedbackWarning,
        RequestRejected,
        ResponseRejected,
        guard_session,
    )
    from autofeedback.integrations._guard import (
        ToolCallsDecision,
        check_tool_calls,
        decide_tool_calls,
        guard,
        guard_tool,
        tool_messages,
    )
    from autofeedback.loop._loop import Attempt, FeedbackLoop, LoopResult
    from autofeedback.scanner._scan import Scanner, iter_findings, scan

# Everything past the exceptions loads on first use (the findings' dataclasses import
# inspect, a third of `import autofeedback`; the checks pull in jsonschema and its
# format checkers, the spec loaders YAML, the integrations HTTP clients and servers),
# so that `import autofeedback`, `autofeedback --version` and the pytest plugin of a
# run that does not use it stay fast.
_LAZY: dict[str, str] = {
    "CODES": "autofeedback.core._findings",
    "Finding": "autofeedback.core._findings",
    "Repair": "autofeedback.core._findings",
    "Severity": "autofeedback.core._findings",
    "ApiCatalog": "autofeedback.catalog._catalog",
    "render_feedback": "autofeedback.decide._feedback",
    "ApiRequest": "autofeedback.core._model",
    "Operation": "autofeedback.core._model",
    "Parameter": "autofeedback.core._model",
    "Response": "autofeedback.core._model",
    "Scanner": "autofeedback.scanner._scan",
    "iter_findings": "autofeedback.scanner._scan",
    "scan": "autofeedback.scanner._scan",
    "InvalidPatternWarning": "autofeedback._specs._regexes",
    "RemoteRefs": "autofeedback._specs._remote",
    "AuditResult": "autofeedback.audit._audit",
    "AuditSummary": "autofeedback.audit._audit",
    "audit_lines": "autofeedback.audit._audit",
    "AutoFeedbackWarning": "autofeedback.integrations._adapter",
    "RequestRejected": "autofeedback.integrations._adapter",
    "ResponseRejected": "autofeedback.integrations._adapter",
    "guard_session": "autofeedback.integrations._adapter",
    "check_tool_calls": "autofeedback.integrations._guard",
    "decide_tool_calls": "autofeedback.integrations._guard",
    "ToolCallsDecision": "autofeedback.integrations._guard",
    "Decider": "autofeedback.decide",
    "Decision": "autofeedback.decide",
    "Policy": "autofeedback.decide",
    "Session": "autofeedback.decide",
    "guard": "autofeedback.integrations._guard",
    "guard_tool": "autofeedback.integrations._guard",
    "tool_messages": "autofeedback.integrations._guard",
    "Attempt": "autofeedback.loop._loop",
    "FeedbackLoop": "autofeedback.loop._loop",
    "LoopResult": "autofeedback.loop._loop",
}

#: names that moved to a public module that says what they are: they keep working
#: for one release, with a DeprecationWarning naming the new home
_MOVED: dict[str, str] = {
    "AutoFeedbackCapability": "autofeedback.frameworks",
    "AutoFeedbackGuardrail": "autofeedback.frameworks",
    "AutoFeedbackMCPMiddleware": "autofeedback.frameworks",
    "AutoFeedbackMiddleware": "autofeedback.frameworks",
    "AutoFeedbackRunHooks": "autofeedback.frameworks",
    "AutoFeedbackToolWrapper": "autofeedback.frameworks",
    "GuardAdapter": "autofeedback.frameworks",
    "guard_langchain_tool": "autofeedback.frameworks",
    "CallableLLM": "autofeedback.llm",
    "LLMClient": "autofeedback.llm",
    "LLMError": "autofeedback.llm",
    "LangChainLLM": "autofeedback.llm",
    "LocalLLM": "autofeedback.llm",
    "OpenAICompatibleLLM": "autofeedback.llm",
    "ReplayLLM": "autofeedback.llm",
    "Usage": "autofeedback.llm",
    "load_llm": "autofeedback.llm",
    "ParseResult": "autofeedback.parsing",
    "RequestFormatError": "autofeedback.parsing",
    "parse_output": "autofeedback.parsing",
    "request_from_call": "autofeedback.parsing",
    "request_from_http": "autofeedback.parsing",
    "McpProxy": "autofeedback.proxy",
    "McpProxyOptions": "autofeedback.proxy",
    "ProxyConfig": "autofeedback.proxy",
    "create_proxy_app": "autofeedback.proxy",
    "DocumentedResponse": "autofeedback.responses",
    "Explanation": "autofeedback.responses",
    "Requirement": "autofeedback.responses",
    "explain_response": "autofeedback.responses",
    "ProgramRunner": "autofeedback.runners",
    "ReactRunner": "autofeedback.runners",
    "TaskResult": "autofeedback.runners",
    "TaskTurn": "autofeedback.runners",
    "Sandbox": "autofeedback.sandbox",
    "function_path": "autofeedback.sandbox",
    "to_openapi": "autofeedback.sandbox",
    "FlowGraph": "autofeedback.sequences",
    "Producer": "autofeedback.sequences",
    "ProgramScores": "autofeedback.sequences",
    "SequenceChecker": "autofeedback.sequences",
    "check_sequence": "autofeedback.sequences",
    "closest_path": "autofeedback.sequences",
    "response_schemas_from_graphql": "autofeedback.sequences",
    "schema_at": "autofeedback.sequences",
    "score_programs": "autofeedback.sequences",
    "sequence_from_chat": "autofeedback.sequences",
    "sequence_from_program": "autofeedback.sequences",
    "sequence_from_record": "autofeedback.sequences",
    "with_responses": "autofeedback.sequences",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value
        return value
    home = _MOVED.get(name)
    if home is not None:
        import warnings

        # not cached: every use of the old name warns, until it is gone
        warnings.warn(
            f"autofeedback.{name} moved to {home}.{name}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_importlib.import_module(home), name)
    raise AttributeError(f"module 'autofeedback' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CODES",
    "ApiCatalog",
    "ApiRequest",
    "Attempt",
    "AuditResult",
    "AuditSummary",
    "AutoFeedbackError",
    "AutoFeedbackWarning",
    "ConfigurationError",
    "Decider",
    "Decision",
    "FeedbackLoop",
    "FileNotRead",
    "Finding",
    "HostNotAllowed",
    "InvalidPatternWarning",
    "LoopResult",
    "Operation",
    "Parameter",
    "Policy",
    "RemoteRefs",
    "Repair",
    "RequestRejected",
    "Response",
    "ResponseRejected",
    "Scanner",
    "Session",
    "Severity",
    "SpecError",
    "SpecWarning",
    "ToolCallRejected",
    "ToolCallsDecision",
    "audit_lines",
    "check_tool_calls",
    "decide_tool_calls",
    "guard",
    "guard_session",
    "guard_tool",
    "iter_findings",
    "render_feedback",
    "scan",
    "tool_messages",
]
