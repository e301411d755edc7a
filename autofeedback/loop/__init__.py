"""The feedback loop: LLM clients, prompts, repair, sending, and explaining responses.

May import the top-level core and ``checks``; never ``audit``, ``integrations`` or ``cli``.
"""
