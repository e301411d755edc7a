"""The offline audit: log readers (JSONL, HAR, chat logs), engines, and report formats.

May import the top-level core and ``checks``; never ``loop``, ``integrations`` or ``cli``.
"""
