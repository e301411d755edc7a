"""The feedback loop: LLM clients, prompts, repair, sending, and explaining responses.

May import every folder below it (``core`` ... ``scanner``, ``serve``, ``decide``);
never ``audit``, ``integrations`` or ``cli``.
"""
