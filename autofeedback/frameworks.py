"""Agent-framework adapters, each in the idiom its users already write: a LangChain agent
middleware and tool wrapper, OpenAI Agents SDK run hooks, a pydantic-ai capability, a
FastMCP middleware, a LiteLLM guardrail, and the :class:`GuardAdapter` they share. Each
framework is imported when its adapter is (its optional extra).

>>> from autofeedback.frameworks import GuardAdapter
>>> GuardAdapter.__name__
'GuardAdapter'
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

if _TYPE_CHECKING:
    from autofeedback.integrations._adapter import GuardAdapter
    from autofeedback.integrations._fastmcp import AutoFeedbackMCPMiddleware
    from autofeedback.integrations._langchain import guard_langchain_tool
    from autofeedback.integrations._langchain_agent import (
        AutoFeedbackMiddleware,
        AutoFeedbackToolWrapper,
    )
    from autofeedback.integrations._litellm import AutoFeedbackGuardrail
    from autofeedback.integrations._openai_agents import AutoFeedbackRunHooks
    from autofeedback.integrations._pydantic_ai import AutoFeedbackCapability

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "GuardAdapter": "autofeedback.integrations._adapter",
    "AutoFeedbackMCPMiddleware": "autofeedback.integrations._fastmcp",
    "guard_langchain_tool": "autofeedback.integrations._langchain",
    "AutoFeedbackMiddleware": "autofeedback.integrations._langchain_agent",
    "AutoFeedbackToolWrapper": "autofeedback.integrations._langchain_agent",
    "AutoFeedbackGuardrail": "autofeedback.integrations._litellm",
    "AutoFeedbackRunHooks": "autofeedback.integrations._openai_agents",
    "AutoFeedbackCapability": "autofeedback.integrations._pydantic_ai",
}


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "AutoFeedbackCapability",
    "AutoFeedbackGuardrail",
    "AutoFeedbackMCPMiddleware",
    "AutoFeedbackMiddleware",
    "AutoFeedbackRunHooks",
    "AutoFeedbackToolWrapper",
    "GuardAdapter",
    "guard_langchain_tool",
]
