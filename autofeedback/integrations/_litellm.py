"""The LiteLLM proxy (gateway): a custom guardrail that checks and repairs the tool calls of
every chat completion passing through it, after the call (``post_call``), with the one
decision (:mod:`autofeedback.integrations._door`).

A gateway runs no tools: the client does. So, as ``autofeedback proxy`` does, the
guardrail answers a message whose calls have errors by asking the model again, with the
feedback as the tool results of that message (a call that was fine is told it did not
run), until its calls are clean or repaired, or the policy's rounds are spent; the client
gets that last response, with the certain repairs written into its calls. The rounds it
asked are logged on the ``autofeedback.guard`` logger.

In the proxy's ``config.yaml``::

    guardrails:
      - guardrail_name: autofeedback
        litellm_params:
          guardrail: autofeedback.frameworks.AutoFeedbackGuardrail
          mode: post_call
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from autofeedback.decide import Policy
from autofeedback.integrations._door import NOT_RUN_WITH, Door, Turn, log_repairs
from autofeedback.integrations._guard import SpecLike

# importing litellm fetches its model price list from the internet unless told not to:
# autofeedback reaches no origin it was not given (set the variable yourself to choose)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from litellm.integrations.custom_guardrail import CustomGuardrail as _Base
else:
    try:
        from litellm.integrations.custom_guardrail import CustomGuardrail as _Base
    except ImportError:  # the extra is absent: the class says how to get it when made
        from autofeedback.integrations._door import absent

        _Base = absent("litellm", "AutoFeedbackGuardrail")

__all__ = ["AutoFeedbackGuardrail"]

_log = logging.getLogger("autofeedback.guard")

#: what a request carries for the proxy itself, not for the model: not sent again
_PROXY_KEYS = ("proxy_server_request", "litellm_logging_obj", "litellm_call_id", "stream")

Completion = Callable[..., Awaitable[Any]]


def _calls(response: Any) -> tuple[Any, list[Any]]:
    """The assistant message of a chat completion and its tool calls."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    return message, list(getattr(message, "tool_calls", None) or [])


def _written(turn: Turn, calls: list[Any]) -> list[dict[str, Any]]:
    """The calls as OpenAI Chat dicts, with every certain repair written in."""
    out = []
    for call, verdict in zip(calls, turn.calls, strict=True):
        name, arguments = call.function.name, call.function.arguments
        request = verdict.decision.request
        if verdict.repairs and request is not None:
            name = request.name
            arguments = json.dumps(dict(request.arguments), ensure_ascii=False)
        out.append(
            {"id": call.id, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
    return out


async def _default_completion(**data: Any) -> Any:
    """Ask the model again: through the LiteLLM proxy's router where it runs (the model
    names of its ``config.yaml``), else with ``litellm.acompletion``."""
    import litellm

    router = None
    try:
        from litellm.proxy import proxy_server

        router = proxy_server.llm_router
    except Exception:  # the SDK without its proxy server
        router = None
    if router is not None:
        return await router.acompletion(**data)
    return await litellm.acompletion(**data)


class AutoFeedbackGuardrail(_Base):  # type: ignore[misc,unused-ignore]  # Any where the extra is absent
    """A LiteLLM ``CustomGuardrail`` (``mode: post_call``) that checks and repairs the
    tool calls of each chat completion, and asks the model again with the feedback where
    a call has errors (as ``autofeedback proxy`` does).

    ``tools``: the docs to check against (default: the request's ``tools``); ``policy``:
    the repairs and bounds (:class:`~autofeedback.Policy`: three feedback rounds per
    request by default); ``completion``: how to ask the model again (default: the proxy's
    router, else ``litellm.acompletion``). Other keyword arguments are LiteLLM's
    (``guardrail_name``, ``event_hook``, ``default_on`` ...).
    """

    def __init__(
        self,
        tools: SpecLike | None = None,
        *,
        policy: Policy | None = None,
        retriever: Any = "auto",
        completion: Completion | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.door = Door(tools, policy=policy, retriever=retriever)
        self.completion: Completion = completion if completion is not None else _default_completion

    async def async_post_call_success_hook(
        self, data: dict[str, Any], user_api_key_dict: Any, response: Any
    ) -> Any:
        message, calls = _calls(response)
        if not calls:
            return response
        tools = data.get("tools") if self.door._fixed is None else None
        if self.door._fixed is None and not tools:
            return response  # no tool list to judge the calls by
        session = self.door.session()
        history = list(data.get("messages") or [])
        asked = 0
        while True:
            turn = self.door.decide(
                [(c.id, c.function.name, c.function.arguments) for c in calls], session, tools
            )
            if turn.action == "forward":
                log_repairs(turn.calls)
                for call, written in zip(calls, _written(turn, calls), strict=True):
                    call.function.name = written["function"]["name"]
                    call.function.arguments = written["function"]["arguments"]
                break
            if turn.action == "stop":
                _log.warning(
                    "tool calls still rejected after %d round(s): %s", asked, turn.as_dict()
                )
                break
            shown = {
                "role": "assistant",
                "content": message.content,
                "tool_calls": _written(turn, calls),
            }
            replies = [
                {"role": "tool", "tool_call_id": c.id, "content": v.feedback or NOT_RUN_WITH}
                for c, v in zip(calls, turn.calls, strict=True)
            ]
            history = [*history, shown, *replies]
            asked += 1
            request = {k: v for k, v in data.items() if k not in _PROXY_KEYS}
            response = await self.completion(**{**request, "messages": history})
            message, calls = _calls(response)
            if not calls:
                break
        if asked:
            _log.warning("asked the model %d more time(s) with feedback", asked)
        return response
