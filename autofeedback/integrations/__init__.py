"""Where autofeedback meets other code: the ``requests`` guard, tool-call guards, LangChain, pytest,
and the MCP proxy (``_mcp_schema`` -> ``_mcp_gate`` -> ``_mcp_proxy``, only the last on the SDK).

May import the top-level core, ``checks`` and ``loop``; never ``audit`` or ``cli``.
"""
