"""The OpenAI Agents SDK (``openai-agents``): run hooks, a tool input guardrail and a run
configuration that put the one decision (:mod:`autofeedback.integrations._door`) on every
function call of a run.

* :meth:`AutoFeedbackRunHooks.on_llm_end` decides the function calls of each model
  response against the agent's tools (its MCP tools included), judged by the run's
  session, and writes the certain argument repairs into the calls, which then run
  repaired;
* the tool input guardrail (:attr:`AutoFeedbackRunHooks.tool_input_guardrail`, added to
  an agent's function tools by :meth:`AutoFeedbackRunHooks.guard`) answers a call with
  errors with the feedback (``reject_content``): the model sees it and the run goes on;
* :meth:`AutoFeedbackRunHooks.run_config` answers a call of a tool the agent does not
  have with the feedback too (``tool_not_found_behavior="return_error_to_model"``), where
  the SDK would end the run with ``ModelBehaviorError``. The SDK picks a call's tool by its
  name before any hook runs, so a misspelt tool name is fed back with the call to make,
  not run renamed.

When the policy's rounds or repeats are spent, ``on_llm_end`` raises
:class:`~autofeedback.ToolCallRejected`, which ends the run.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from autofeedback.core._exceptions import ToolCallRejected
from autofeedback.decide import Policy
from autofeedback.integrations._door import CallVerdict, Door, Turn, log_repairs
from autofeedback.integrations._guard import SpecLike

if TYPE_CHECKING:
    from agents import RunHooks as _Base
else:
    try:
        from agents import RunHooks as _Base
    except ImportError:  # the extra is absent: the class says how to get it when made
        from autofeedback.integrations._door import absent

        _Base = absent("openai-agents", "AutoFeedbackRunHooks")

__all__ = ["AutoFeedbackRunHooks"]

#: how many calls' verdicts a run keeps for its guardrail and error formatter
_REMEMBERED = 4096


def _tool_dict(tool: Any) -> dict[str, Any] | None:
    """A function tool of the SDK in OpenAI's function shape; ``None`` for hosted tools."""
    schema = getattr(tool, "params_json_schema", None)
    name = getattr(tool, "name", None)
    if not isinstance(schema, dict) or not isinstance(name, str):
        return None
    return {
        "name": name,
        "description": getattr(tool, "description", "") or "",
        "parameters": schema,
    }


class AutoFeedbackRunHooks(_Base):  # type: ignore[misc,unused-ignore]  # Any where the extra is absent
    """``RunHooks`` that check and repair the function calls of one run.

    Make one per run (it holds the run's feedback rounds), give the run its
    :meth:`run_config` and the agent its guardrail (:meth:`guard`)::

        hooks = AutoFeedbackRunHooks()
        result = await Runner.run(hooks.guard(agent), "Weather in Paris?",
                                  hooks=hooks, run_config=hooks.run_config())

    ``tools``: the docs to check against (default: the agent's tools, as the model sees
    them); ``policy``: the repairs and bounds (:class:`~autofeedback.Policy`).
    :attr:`turns` holds what was decided at each model response.
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
    ) -> None:
        from agents import ToolInputGuardrail

        super().__init__()
        self.door = Door(tools, policy=policy, retriever=retriever)
        self.session = self.door.session()
        self.turns: list[Turn] = []
        self._verdicts: OrderedDict[str, tuple[Turn, CallVerdict]] = OrderedDict()
        #: the guardrail to add to each function tool's ``tool_input_guardrails``
        self.tool_input_guardrail: Any = ToolInputGuardrail(
            guardrail_function=self._check_input, name="autofeedback"
        )

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        from openai.types.responses import ResponseFunctionToolCall

        calls = [o for o in response.output if isinstance(o, ResponseFunctionToolCall)]
        if not calls:
            return
        tools = None
        if self.door._fixed is None:
            found = [_tool_dict(t) for t in await agent.get_all_tools(context)]
            tools = [t for t in found if t is not None]
        turn = self.door.decide(
            [(c.call_id, c.name, c.arguments) for c in calls], self.session, tools
        )
        self.turns.append(turn)
        for call, verdict in zip(calls, turn.calls, strict=True):
            self._verdicts[call.call_id] = (turn, verdict)
            while len(self._verdicts) > _REMEMBERED:
                self._verdicts.popitem(last=False)
        if turn.action == "stop":
            errors = [f for c in turn.calls for f in c.decision.errors]
            told = "\n\n".join(c.feedback for c in turn.calls if c.feedback)
            raise ToolCallRejected(errors, told)

    def _repaired(self, call_id: str, name: str) -> str | None:
        """The repaired arguments (JSON) to run the call ``call_id`` of tool ``name`` with,
        ``None`` to run it as written."""
        found = self._verdicts.get(call_id)
        if found is None:
            return None
        verdict = found[1]
        request = verdict.decision.request
        if not (verdict.runs and verdict.repairs and request is not None and request.name == name):
            return None
        log_repairs([verdict])
        return json.dumps(dict(request.arguments), ensure_ascii=False)

    def _check_input(self, data: Any) -> Any:
        from agents import ToolGuardrailFunctionOutput

        found = self._verdicts.get(data.context.tool_call_id)
        if found is None:
            return ToolGuardrailFunctionOutput.allow()
        turn, verdict = found
        info = {**turn.record(), "repairs": [r.as_dict() for r in verdict.repairs]}
        request = verdict.decision.request
        if verdict.runs and request is not None and request.name == data.context.tool_name:
            return ToolGuardrailFunctionOutput.allow(output_info=info)
        return ToolGuardrailFunctionOutput.reject_content(verdict.told(), output_info=info)

    def format_tool_error(self, args: Any) -> str | None:
        """The ``tool_error_formatter``: a call of a tool the agent does not have is
        answered with its feedback (other errors keep the SDK's message)."""
        if getattr(args, "kind", None) != "tool_not_found":
            return None
        found = self._verdicts.get(args.call_id)
        return found[1].told() if found is not None else None

    def run_config(self, **kwargs: Any) -> Any:
        """A ``RunConfig`` (with ``kwargs``) that answers a call of an unknown tool with
        the feedback instead of ending the run."""
        from agents import RunConfig

        return RunConfig(
            tool_not_found_behavior="return_error_to_model",
            tool_error_formatter=self.format_tool_error,
            **kwargs,
        )

    def guard(self, agent: Any) -> Any:
        """A copy of ``agent`` whose function tools run this guardrail first and take a
        repaired call's arguments (the SDK records the call as the model wrote it: the
        repairs are in the guardrail's ``output_info`` and on the ``autofeedback`` logger)."""
        from agents import FunctionTool

        return agent.clone(
            tools=[self._guarded(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        )

    def _guarded(self, tool: Any) -> Any:
        import dataclasses

        mine = list(tool.tool_input_guardrails or [])
        if self.tool_input_guardrail not in mine:
            mine.append(self.tool_input_guardrail)
        invoke = tool.on_invoke_tool
        if getattr(invoke, "__self__", None) is self:  # guarded by this run's hooks already
            return dataclasses.replace(tool, tool_input_guardrails=mine)
        return dataclasses.replace(
            tool, tool_input_guardrails=mine, on_invoke_tool=_Invoke(self, tool.name, invoke)
        )


class _Invoke:
    """A function tool's ``on_invoke_tool`` that runs a repaired call with its repaired
    arguments."""

    def __init__(self, hooks: AutoFeedbackRunHooks, name: str, inner: Any) -> None:
        self.__self__ = hooks
        self.name = name
        self.inner = inner

    async def __call__(self, ctx: Any, arguments: str) -> Any:
        repaired = self.__self__._repaired(getattr(ctx, "tool_call_id", ""), self.name)
        return await self.inner(ctx, repaired if repaired is not None else arguments)
