"""Serving an API: the sandbox (``_sandbox*``: an HTTP server that answers any spec,
with state), its documented rules (``_doc_rules``) and what every server here shares
(``_serve``: loopback, signals, grace; ``_listen``: a port that cannot be bound).

May import ``core``, ``_parse``, ``_specs``, ``catalog`` and ``checks``; never ``flow``,
``scanner``, ``decide``, ``loop``, ``audit``, ``integrations`` or ``cli``.
"""
