"""fastmcp (server side): a middleware that checks every ``tools/call`` against the tools
the server lists, before the tool runs, with the MCP proxy's gate
(:class:`~autofeedback.integrations._mcp_gate.ToolGate`, the one decision for MCP).

For people who own the server rather than proxy it: a call the docs leave no doubt about
runs repaired (``City`` -> ``city``, ``"3"`` -> ``3``, an object sent as JSON text); a
call with errors, or of a tool the server does not have, is answered with the feedback as
a tool error (``isError``), which the client's model reads; the ``repeat_limit``-th
identical rejected call of a session is told to stop.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from autofeedback.decide import RepairMode
from autofeedback.integrations._mcp_gate import Decision, ToolGate

if TYPE_CHECKING:
    from fastmcp.server.middleware import Middleware as _Base
else:
    try:
        from fastmcp.server.middleware import Middleware as _Base
    except ImportError:  # the extra is absent: the class says how to get it when made
        from autofeedback.integrations._door import absent

        _Base = absent("fastmcp", "AutoFeedbackMCPMiddleware")

__all__ = ["AutoFeedbackMCPMiddleware"]

_log = logging.getLogger("autofeedback.guard")


class AutoFeedbackMCPMiddleware(_Base):  # type: ignore[misc,unused-ignore]  # Any where the extra is absent
    """A fastmcp ``Middleware`` that checks and repairs ``tools/call`` before the tool
    runs.

    ``retriever``: the embedding model for names by meaning (``"auto"``; ``None``: spelling
    only); ``repeat_limit``: the N-th identical rejected call of a session gets a firm
    stop (``0``: never); ``repair``: ``"sure"`` runs the certain repairs, ``"off"`` feeds
    them back. :attr:`decisions` holds the last decisions (for logs and tests).

    >>> from fastmcp import FastMCP                          # doctest: +SKIP
    >>> mcp = FastMCP("weather")                             # doctest: +SKIP
    >>> mcp.add_middleware(AutoFeedbackMCPMiddleware())      # doctest: +SKIP
    """

    def __init__(
        self, *, retriever: Any = "auto", repeat_limit: int = 3, repair: RepairMode = "sure"
    ) -> None:
        super().__init__()
        self.gate = ToolGate(retriever=retriever, repeat_limit=repeat_limit, repair=repair)
        self.decisions: list[Decision] = []
        self._listing: str | None = None

    async def _load(self, context: Any) -> None:
        """The gate holds the server's tools as listed now (reloaded when they change)."""
        server = context.fastmcp_context.fastmcp
        tools = await server.list_tools(run_middleware=False)
        listed = [
            {"name": t.name, "description": t.description or "", "inputSchema": t.parameters}
            for t in tools
            if getattr(t, "enabled", True)
        ]
        key = json.dumps(listed, sort_keys=True, default=str)
        if key != self._listing:
            self.gate.load(listed)
            self._listing = key

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        import anyio.to_thread
        from fastmcp.exceptions import ToolError

        await self._load(context)
        name = context.message.name
        arguments = dict(context.message.arguments or {})
        try:
            conversation = context.fastmcp_context.session_id
        except Exception:  # no session (an in-process call): one conversation
            conversation = None
        if self.gate.needs_model(name, arguments) or self.gate.is_heavy(name, arguments):
            decision = await anyio.to_thread.run_sync(
                lambda: self.gate.check(name, arguments, conversation=conversation)
            )
        else:
            decision = self.gate.check(name, arguments, conversation=conversation)
        self.decisions = [*self.decisions[-63:], decision]
        if decision.action == "forward":
            if decision.call_name is not None:
                _log.warning(
                    "%s: called with the repairs %s",
                    decision.call_name,
                    "; ".join(map(str, decision.repairs)),
                )
                message = context.message.model_copy(
                    update={
                        "name": decision.call_name,
                        "arguments": dict(decision.call_arguments or {}),
                    }
                )
                context = context.copy(message=message)
            return await call_next(context)
        raise ToolError(decision.feedback or decision.message)
