"""Where autofeedback meets other code: the ``requests`` guard, tool-call guards, LangChain, pytest.

May import the top-level core, ``checks`` and ``loop``; never ``audit`` or ``cli``.
"""
