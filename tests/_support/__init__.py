"""What several test modules share: tools with a data dependency (``account_tools``), the
child processes of a server under test (``processes``), Hypothesis strategies for what
autofeedback reads (``fuzz_strategies``), the agent-framework scenario
(``agent_frameworks``) and the MCP proxy's client helpers (``mcp_proxy``).

Imported as ``_support.NAME``: ``tests/`` is on ``sys.path`` because ``tests/conftest.py``
is there (pytest's default ``prepend`` import mode)."""
