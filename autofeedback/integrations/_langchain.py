"""Guard a LangChain tool: an invalid call gets the static feedback back (a
``ToolMessage`` when invoked with a tool call) instead of running the tool.

The check runs on the arguments exactly as the model wrote them, before LangChain's own
pydantic parsing (which would drop an unknown argument silently or answer with a
validation error that names no documented alternative).
"""

from __future__ import annotations

import functools
from typing import Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._install import install_hint
from autofeedback.decide import RepairMode
from autofeedback.integrations._guard import SpecLike, _ToolGuard, as_catalog

__all__ = ["guard_langchain_tool"]


def _require_langchain() -> Any:
    try:
        from langchain_core import tools
    except ImportError as exc:  # an optional extra: say how to get it
        raise ConfigurationError(
            f"guard_langchain_tool needs langchain-core: {install_hint('langchain')}"
        ) from exc
    return tools


def _tool_catalog(tool: Any) -> ApiCatalog:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return ApiCatalog.from_tools([convert_to_openai_tool(tool)], source=f"<tool {tool.name}>")


def _arguments(tool: Any, tool_input: Any) -> dict[str, Any]:
    if isinstance(tool_input, dict):
        return dict(tool_input)
    # a bare string goes to a single-argument tool's only argument, as LangChain does it
    fields = list(tool.tool_call_schema.model_json_schema().get("properties", {}))
    return {fields[0]: tool_input} if len(fields) == 1 else {"input": tool_input}


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "tool_call" and "args" in value


def guard_langchain_tool(
    tool: Any,
    spec_or_catalog: SpecLike | None = None,
    *,
    retriever: Any = "auto",
    repair: RepairMode = "sure",
) -> Any:
    """A LangChain tool that behaves like ``tool`` for valid calls and answers an invalid
    one with the static feedback, without running ``tool``.

    The docs are ``spec_or_catalog`` when given (the operation is the tool's name), else
    the tool's own argument schema (``convert_to_openai_tool(tool)``). Invoked with a
    tool call (``{"type": "tool_call", "id", "args"}``), a rejected call returns a
    ``ToolMessage`` with ``status="error"``; invoked with plain arguments, the feedback
    string. ``repair="sure"`` (the default) runs the tool with the repaired arguments
    where every error has a certain repair (logged as for :func:`guard`).

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str, days: int = 1) -> str:
    ...     '''Weather forecast for a city.'''
    ...     return "sunny"
    >>> safe = guard_langchain_tool(get_weather)
    >>> safe.invoke({"city": "Paris"})
    'sunny'
    >>> safe.invoke({"City": "Paris"})       # City -> city: the same word, repaired
    'sunny'
    >>> print(safe.invoke({"town": "Paris"}).splitlines()[1][:36])   # by meaning: asked
    Error E3.3 (semantic variant of a pa
    >>> print(safe.invoke({"days": 2}).splitlines()[1][:30])
    Error E3.4 (missing required p
    """
    lc_tools = _require_langchain()
    if not isinstance(tool, lc_tools.BaseTool):
        raise ConfigurationError(f"expected a LangChain BaseTool, got {type(tool).__name__}")
    catalog = as_catalog(spec_or_catalog) if spec_or_catalog is not None else _tool_catalog(tool)
    checker = _ToolGuard(catalog, tool.name, retriever, repair)
    return _guarded_class()(
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        return_direct=tool.return_direct,
        inner=tool,
        checker=checker,
    )


@functools.cache
def _guarded_class() -> Any:
    """The BaseTool subclass, defined on first use so that importing autofeedback never
    imports langchain-core."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool

    class GuardedTool(BaseTool):
        """A tool whose calls are checked against the docs before ``inner`` runs."""

        inner: Any
        checker: Any

        def _decided(self, tool_input: Any, tool_call_id: str | None) -> tuple[Any, Any]:
            """``(answer, input)``: the feedback answer for a rejected call, else the input
            to run the tool with (the repaired arguments where the decision repaired a
            mapping input)."""
            problem, repaired = self.checker.verdict(_arguments(self.inner, tool_input))
            if problem is None:
                use = repaired if repaired is not None and isinstance(tool_input, dict) else None
                return None, (tool_input if use is None else use)
            if tool_call_id is None:
                return problem.feedback, tool_input
            message = ToolMessage(
                problem.feedback, tool_call_id=tool_call_id, name=self.name, status="error"
            )
            return message, tool_input

        def _input(self, input: Any) -> tuple[Any, Any]:
            if _is_tool_call(input):
                answer, args = self._decided(input["args"], input.get("id"))
                return answer, {**input, "args": args}
            return self._decided(input, None)

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            answer, input = self._input(input)
            return answer if answer is not None else self.inner.invoke(input, config, **kwargs)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            answer, input = self._input(input)
            if answer is not None:
                return answer
            return await self.inner.ainvoke(input, config, **kwargs)

        def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            answer, tool_input = self._decided(tool_input, kwargs.get("tool_call_id"))
            return answer if answer is not None else self.inner.run(tool_input, *args, **kwargs)

        async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
            answer, tool_input = self._decided(tool_input, kwargs.get("tool_call_id"))
            if answer is not None:
                return answer
            return await self.inner.arun(tool_input, *args, **kwargs)

        def _run(self, *args: Any, **kwargs: Any) -> Any:
            # never reached: run/invoke delegate to the inner tool's own machinery
            raise NotImplementedError

    return GuardedTool
