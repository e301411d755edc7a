"""Agent-framework adapters, each in the idiom its users already write: a LangChain agent
middleware and tool wrapper, OpenAI Agents SDK run hooks, a pydantic-ai capability, a
FastMCP middleware, a LiteLLM guardrail, and the :class:`GuardAdapter` they share. Each
framework is imported when its adapter is (its optional extra).

>>> from autofeedback.frameworks import GuardAdapter
>>> GuardAdapter.__name__
'GuardAdapter'
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

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
    "AutoFeedbackCapability",
    "AutoFeedbackGuardrail",
    "AutoFeedbackMCPMiddleware",
    "AutoFeedbackMiddleware",
    "AutoFeedbackRunHooks",
    "AutoFeedbackToolWrapper",
    "GuardAdapter",
    "guard_langchain_tool",
]
