"""pydantic-ai: a capability that puts the one decision
(:mod:`autofeedback.integrations._door`) on every tool call of an agent run.

* ``after_model_request`` decides the tool calls of each model response against the tools
  of the request, judged by the run's session; the certain repairs are written into the
  response's ``ToolCallPart`` s (name and arguments), before pydantic-ai picks a tool by
  name or validates the arguments: the repaired call runs, and the message history holds
  it as it ran;
* ``before_tool_validate`` answers a call with errors with the feedback, as the
  ``ModelRetry`` pydantic-ai turns into a retry prompt for that call; the other calls of
  the response run;
* a call of a tool the agent does not have gets pydantic-ai's own retry prompt (it names
  the available tools; a name the docs can repair was repaired before);
* when the policy's rounds or repeats are spent, :class:`~autofeedback.ToolCallRejected`
  ends the run.

pydantic-ai counts each tool's retries too (``Agent(retries=...)``, 1 by default): a tool
retried more often than that ends the run with ``UnexpectedModelBehavior``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from autofeedback.core._exceptions import ToolCallRejected
from autofeedback.decide import Policy
from autofeedback.integrations._door import Door, Turn, log_repairs
from autofeedback.integrations._guard import SpecLike

if TYPE_CHECKING:
    from pydantic_ai.capabilities import AbstractCapability as _Base
else:
    try:
        from pydantic_ai.capabilities import AbstractCapability as _Base
    except ImportError:  # the extra is absent: the class says how to get it when made
        from autofeedback.integrations._door import absent

        _Base = absent("pydantic-ai", "AutoFeedbackCapability")

__all__ = ["AutoFeedbackCapability"]


def _tool_dicts(parameters: Any) -> list[dict[str, Any]]:
    """The tools of a model request (function and output tools) in OpenAI's shape."""
    defs = [*parameters.function_tools, *getattr(parameters, "output_tools", [])]
    return [
        {"name": d.name, "description": d.description or "", "parameters": d.parameters_json_schema}
        for d in defs
    ]


class AutoFeedbackCapability(_Base):  # type: ignore[misc,unused-ignore]  # Any where the extra is absent
    """A pydantic-ai capability that checks and repairs the tool calls of each run.

    ``tools``: the docs to check against (default: the tools of each model request);
    ``policy``: the repairs and bounds (:class:`~autofeedback.Policy`). Each run gets its
    own session; :attr:`turns` (of the run's instance) holds what was decided.

    >>> from pydantic_ai import Agent                      # doctest: +SKIP
    >>> agent = Agent(model, tools=[get_weather],           # doctest: +SKIP
    ...               capabilities=[AutoFeedbackCapability()])
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
        door: Door | None = None,
    ) -> None:
        self.door = door if door is not None else Door(tools, policy=policy, retriever=retriever)
        self.session = self.door.session()
        self.turns: list[Turn] = []
        self._told: dict[str, str] = {}

    async def for_run(self, ctx: Any) -> AutoFeedbackCapability:
        # a fresh session per run; the deciders (one per tool list) are shared
        return AutoFeedbackCapability(door=self.door)

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        from pydantic_ai.messages import ToolCallPart

        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        self._told = {}
        if not calls:
            return response
        tools = None
        if self.door._fixed is None:
            tools = _tool_dicts(request_context.model_request_parameters)
        turn = self.door.decide(
            [(p.tool_call_id, p.tool_name, p.args) for p in calls], self.session, tools
        )
        self.turns.append(turn)
        if turn.action == "stop":
            errors = [f for c in turn.calls for f in c.decision.errors]
            raise ToolCallRejected(
                errors, "\n\n".join(c.feedback for c in turn.calls if c.feedback)
            )
        log_repairs(turn.calls)
        verdicts = dict(zip((id(p) for p in calls), turn.calls, strict=True))
        parts = []
        for part in response.parts:
            verdict = verdicts.get(id(part))
            if verdict is not None:
                request = verdict.decision.request
                if verdict.repairs and request is not None:
                    # the provider's own item id names the call as the model wrote it
                    part = dataclasses.replace(
                        part, tool_name=request.name, args=dict(request.arguments), id=None
                    )
                if not verdict.runs:
                    self._told[part.tool_call_id] = verdict.told()
            parts.append(part)
        if not turn.repaired:
            return response
        return dataclasses.replace(response, parts=parts)

    async def before_tool_validate(self, ctx: Any, *, call: Any, tool_def: Any, args: Any) -> Any:
        from pydantic_ai import ModelRetry

        told = self._told.pop(call.tool_call_id, None)
        if told is not None:
            raise ModelRetry(told)
        return args
