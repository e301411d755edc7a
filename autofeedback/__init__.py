"""autofeedback: static and dynamic feedback for LLM-generated API requests.

>>> from autofeedback import ApiCatalog, scan
>>> catalog = ApiCatalog.from_tools([{"name": "userLogin", "parameters": {
...     "type": "object", "properties": {"user_name": {"type": "string"}}}}])
>>> print(scan("<API>user_login(user_name='ann')</API>", catalog, retriever=None))
E2.2 api: API 'user_login' does not exist; it is a spelling variant of 'userLogin'
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from autofeedback._exceptions import (
    AutoFeedbackError,
    ConfigurationError,
    HostNotAllowed,
    SpecError,
    SpecWarning,
    ToolCallRejected,
)
from autofeedback._findings import CODES, Finding, Repair, Severity

__version__ = "0.1.0"  # setup.cfg reads it (version = attr: autofeedback.__version__)

if _TYPE_CHECKING:
    from autofeedback._catalog import ApiCatalog
    from autofeedback._model import ApiRequest, Operation, Parameter, Response
    from autofeedback._openapi import function_path, to_openapi
    from autofeedback._parse import (
        ParseResult,
        RequestFormatError,
        parse_output,
        request_from_call,
        request_from_http,
    )
    from autofeedback._sandbox import Sandbox
    from autofeedback._scan import Scanner, iter_findings, scan
    from autofeedback._specs._regexes import InvalidPatternWarning
    from autofeedback._specs._remote import RemoteRefs
    from autofeedback.audit._audit import AuditResult, AuditSummary, audit_lines
    from autofeedback.checks._check_response import DocumentedResponse, Requirement
    from autofeedback.decide import Decider, Decision, Policy, Session
    from autofeedback.decide._feedback import render_feedback
    from autofeedback.flow._checks import SequenceChecker, check_sequence
    from autofeedback.flow._graph import FlowGraph, Producer
    from autofeedback.flow._graphql import response_schemas_from_graphql, with_responses
    from autofeedback.flow._metrics import ProgramScores, score_programs
    from autofeedback.flow._paths import closest_path, schema_at
    from autofeedback.flow._sequence import (
        sequence_from_chat,
        sequence_from_program,
        sequence_from_record,
    )
    from autofeedback.integrations._adapter import (
        AutoFeedbackWarning,
        GuardAdapter,
        RequestRejected,
        ResponseRejected,
        guard_session,
    )
    from autofeedback.integrations._fastmcp import AutoFeedbackMCPMiddleware
    from autofeedback.integrations._guard import (
        ToolCallsDecision,
        check_tool_calls,
        decide_tool_calls,
        guard,
        guard_tool,
        tool_messages,
    )
    from autofeedback.integrations._langchain import guard_langchain_tool
    from autofeedback.integrations._langchain_agent import (
        AutoFeedbackMiddleware,
        AutoFeedbackToolWrapper,
    )
    from autofeedback.integrations._litellm import AutoFeedbackGuardrail
    from autofeedback.integrations._mcp_proxy import McpProxy, McpProxyOptions
    from autofeedback.integrations._openai_agents import AutoFeedbackRunHooks
    from autofeedback.integrations._proxy import ProxyConfig, create_proxy_app
    from autofeedback.integrations._pydantic_ai import AutoFeedbackCapability
    from autofeedback.loop._explain import Explanation, explain_response
    from autofeedback.loop._llm import (
        CallableLLM,
        LangChainLLM,
        LLMClient,
        LLMError,
        LocalLLM,
        OpenAICompatibleLLM,
        Usage,
        load_llm,
    )
    from autofeedback.loop._loop import Attempt, FeedbackLoop, LoopResult
    from autofeedback.loop._replay import ReplayLLM
    from autofeedback.loop._tasks import ProgramRunner, ReactRunner, TaskResult, TaskTurn

# Everything past the findings and the exceptions loads on first use (the
# checks pull in jsonschema and its format checkers, the spec loaders YAML, the
# integrations HTTP clients and servers), so that `import autofeedback`, `autofeedback
# --version` and the pytest plugin of a run that does not use it stay fast.
_LAZY: dict[str, str] = {
    "ApiCatalog": "autofeedback._catalog",
    "render_feedback": "autofeedback.decide._feedback",
    "ApiRequest": "autofeedback._model",
    "Operation": "autofeedback._model",
    "Parameter": "autofeedback._model",
    "Response": "autofeedback._model",
    "ParseResult": "autofeedback._parse",
    "RequestFormatError": "autofeedback._parse",
    "parse_output": "autofeedback._parse",
    "request_from_call": "autofeedback._parse",
    "request_from_http": "autofeedback._parse",
    "Scanner": "autofeedback._scan",
    "iter_findings": "autofeedback._scan",
    "scan": "autofeedback._scan",
    "InvalidPatternWarning": "autofeedback._specs._regexes",
    "RemoteRefs": "autofeedback._specs._remote",
    "AuditResult": "autofeedback.audit._audit",
    "AuditSummary": "autofeedback.audit._audit",
    "audit_lines": "autofeedback.audit._audit",
    "ReplayLLM": "autofeedback.loop._replay",
    "AutoFeedbackWarning": "autofeedback.integrations._adapter",
    "GuardAdapter": "autofeedback.integrations._adapter",
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
    "guard_langchain_tool": "autofeedback.integrations._langchain",
    # the agent-framework adapters: each framework is imported when its adapter is
    "AutoFeedbackCapability": "autofeedback.integrations._pydantic_ai",
    "AutoFeedbackGuardrail": "autofeedback.integrations._litellm",
    "AutoFeedbackMCPMiddleware": "autofeedback.integrations._fastmcp",
    "AutoFeedbackMiddleware": "autofeedback.integrations._langchain_agent",
    "AutoFeedbackRunHooks": "autofeedback.integrations._openai_agents",
    "AutoFeedbackToolWrapper": "autofeedback.integrations._langchain_agent",
    "McpProxy": "autofeedback.integrations._mcp_proxy",
    "McpProxyOptions": "autofeedback.integrations._mcp_proxy",
    "ProxyConfig": "autofeedback.integrations._proxy",
    "create_proxy_app": "autofeedback.integrations._proxy",
    "Explanation": "autofeedback.loop._explain",
    "explain_response": "autofeedback.loop._explain",
    "DocumentedResponse": "autofeedback.checks._check_response",
    "Requirement": "autofeedback.checks._check_response",
    "CallableLLM": "autofeedback.loop._llm",
    "LangChainLLM": "autofeedback.loop._llm",
    "LLMClient": "autofeedback.loop._llm",
    "LLMError": "autofeedback.loop._llm",
    "LocalLLM": "autofeedback.loop._llm",
    "OpenAICompatibleLLM": "autofeedback.loop._llm",
    "Usage": "autofeedback.loop._llm",
    "load_llm": "autofeedback.loop._llm",
    "Attempt": "autofeedback.loop._loop",
    "FeedbackLoop": "autofeedback.loop._loop",
    "LoopResult": "autofeedback.loop._loop",
    "ProgramRunner": "autofeedback.loop._tasks",
    "ReactRunner": "autofeedback.loop._tasks",
    "TaskResult": "autofeedback.loop._tasks",
    "TaskTurn": "autofeedback.loop._tasks",
    "function_path": "autofeedback._openapi",
    "to_openapi": "autofeedback._openapi",
    "Sandbox": "autofeedback._sandbox",
    "FlowGraph": "autofeedback.flow._graph",
    "Producer": "autofeedback.flow._graph",
    "response_schemas_from_graphql": "autofeedback.flow._graphql",
    "with_responses": "autofeedback.flow._graphql",
    "closest_path": "autofeedback.flow._paths",
    "schema_at": "autofeedback.flow._paths",
    "SequenceChecker": "autofeedback.flow._checks",
    "check_sequence": "autofeedback.flow._checks",
    "ProgramScores": "autofeedback.flow._metrics",
    "score_programs": "autofeedback.flow._metrics",
    "sequence_from_chat": "autofeedback.flow._sequence",
    "sequence_from_program": "autofeedback.flow._sequence",
    "sequence_from_record": "autofeedback.flow._sequence",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'autofeedback' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CODES",
    "ApiCatalog",
    "ApiRequest",
    "Attempt",
    "AuditResult",
    "AuditSummary",
    "AutoFeedbackCapability",
    "AutoFeedbackError",
    "AutoFeedbackGuardrail",
    "AutoFeedbackMCPMiddleware",
    "AutoFeedbackMiddleware",
    "AutoFeedbackRunHooks",
    "AutoFeedbackToolWrapper",
    "AutoFeedbackWarning",
    "CallableLLM",
    "ConfigurationError",
    "Decider",
    "Decision",
    "DocumentedResponse",
    "Explanation",
    "FeedbackLoop",
    "Finding",
    "FlowGraph",
    "GuardAdapter",
    "HostNotAllowed",
    "InvalidPatternWarning",
    "LLMClient",
    "LLMError",
    "LangChainLLM",
    "LocalLLM",
    "LoopResult",
    "McpProxy",
    "McpProxyOptions",
    "OpenAICompatibleLLM",
    "Operation",
    "Parameter",
    "ParseResult",
    "Policy",
    "Producer",
    "ProgramRunner",
    "ProgramScores",
    "ProxyConfig",
    "ReactRunner",
    "RemoteRefs",
    "Repair",
    "ReplayLLM",
    "RequestFormatError",
    "RequestRejected",
    "Requirement",
    "Response",
    "ResponseRejected",
    "Sandbox",
    "Scanner",
    "SequenceChecker",
    "Session",
    "Severity",
    "SpecError",
    "SpecWarning",
    "TaskResult",
    "TaskTurn",
    "ToolCallRejected",
    "ToolCallsDecision",
    "Usage",
    "audit_lines",
    "check_sequence",
    "check_tool_calls",
    "closest_path",
    "create_proxy_app",
    "decide_tool_calls",
    "explain_response",
    "function_path",
    "guard",
    "guard_langchain_tool",
    "guard_session",
    "guard_tool",
    "iter_findings",
    "load_llm",
    "parse_output",
    "render_feedback",
    "request_from_call",
    "request_from_http",
    "response_schemas_from_graphql",
    "scan",
    "schema_at",
    "score_programs",
    "sequence_from_chat",
    "sequence_from_program",
    "sequence_from_record",
    "to_openapi",
    "tool_messages",
    "with_responses",
]
