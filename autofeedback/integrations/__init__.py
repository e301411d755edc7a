"""Where autofeedback meets other code: the ``requests`` guard, tool-call guards, LangChain, pytest,
and the MCP proxy (``_mcp_schema`` -> ``_mcp_gate`` -> ``_mcp_proxy``, only the last on the SDK);
the agent-framework adapters (``_door`` -> ``_langchain_agent``, ``_openai_agents``,
``_pydantic_ai``, ``_fastmcp``, ``_litellm``), each on its framework, imported when used.

May import every folder below it (``core`` ... ``decide``, ``serve``, ``loop``); never
``audit`` or ``cli``.
"""
