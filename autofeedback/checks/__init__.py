"""The checks: API name (E2), parameter names (E3), values (E4), documented responses.

May import ``core``, ``_parse``, ``_specs`` and ``catalog``; never ``flow``, ``scanner``,
``serve``, ``decide``, ``loop``, ``audit``, ``integrations`` or ``cli``.
"""
