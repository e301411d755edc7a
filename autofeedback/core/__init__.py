"""The vocabulary every folder shares: the request model, findings, exceptions,
patterns, redaction, origins, argument resolution and the cache directory.

The bottom layer: imports no other ``autofeedback`` folder (``tests/test_layout.py``).
Kept empty so that importing one of its modules costs only that module.
"""
