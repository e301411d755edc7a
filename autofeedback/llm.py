"""LLM clients: anything with ``complete(messages) -> str`` drives the feedback loop and
the runners; these are the ones autofeedback ships (an OpenAI-compatible server, a local
GGUF model, LangChain chat models, a plain function, a replay of recorded answers).

>>> from autofeedback.llm import CallableLLM
>>> CallableLLM(lambda messages: "<API>ping()</API>").complete([{"role": "user", "content": "hi"}])
'<API>ping()</API>'
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

if _TYPE_CHECKING:
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
    from autofeedback.loop._replay import ReplayLLM

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "CallableLLM": "autofeedback.loop._llm",
    "LangChainLLM": "autofeedback.loop._llm",
    "LLMClient": "autofeedback.loop._llm",
    "LLMError": "autofeedback.loop._llm",
    "LocalLLM": "autofeedback.loop._llm",
    "OpenAICompatibleLLM": "autofeedback.loop._llm",
    "Usage": "autofeedback.loop._llm",
    "load_llm": "autofeedback.loop._llm",
    "ReplayLLM": "autofeedback.loop._replay",
}


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "CallableLLM",
    "LLMClient",
    "LLMError",
    "LangChainLLM",
    "LocalLLM",
    "OpenAICompatibleLLM",
    "ReplayLLM",
    "Usage",
    "load_llm",
]
