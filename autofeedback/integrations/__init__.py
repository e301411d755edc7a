"""Where autofeedback meets other code: the ``requests`` guard, tool-call guards, LangChain, pytest,
the OpenAI-compatible proxy (``_proxy_config`` -> ``_proxy_http`` -> ``_proxy_rounds`` -> ``_proxy``
-> ``_proxy_runner``) and the MCP proxy (``_mcp_schema`` -> ``_mcp_gate`` -> ``_mcp_proxy``, only
the last on the SDK);
the agent-framework adapters (``_door`` -> ``_langchain_agent``, ``_openai_agents``,
``_pydantic_ai``, ``_fastmcp``, ``_litellm``), each on its framework, imported when used.

May import every folder below it (``core`` ... ``decide``, ``serve``, ``loop``); never
``audit`` or ``cli``.
"""
