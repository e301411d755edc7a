"""The offline audit: log readers (JSONL, HAR, chat logs), engines, and report formats.

May import ``core`` ... ``scanner`` and ``decide``; never ``serve``, ``loop``,
``integrations`` or ``cli``.
"""
