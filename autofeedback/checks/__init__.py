"""The checks: API name (E2), parameter names (E3), values (E4), documented responses.

May import the top-level core (``_model``, ``_catalog``, ``_findings``, ``_resolve``,
``_openapi``); never ``loop``, ``audit``, ``integrations`` or ``cli``.
"""
