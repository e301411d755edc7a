"""The scanner: one call (``_scan``: E1-E4 in the paper's order) and a sequence of calls
(``_sequences``: each step's findings plus the data-flow checks, E5).

A layer above ``checks`` and ``flow``, which it puts together; they never import it.
May import ``core``, ``_parse``, ``_specs``, ``catalog``, ``checks`` and ``flow``; never
``serve``, ``decide``, ``loop``, ``audit``, ``integrations`` or ``cli``.
"""
