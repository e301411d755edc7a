"""How to install what an optional feature needs: the distribution's name and its extras.

The import package is ``autofeedback``; the distribution on the package index is
``autofeedback-api`` (the name ``autofeedback`` there belongs to an unrelated project).
Every install hint the code prints comes from :func:`install_hint`, so it names the
right distribution and an extra that ``setup.cfg`` defines, in the normalized form
(PEP 685: ``local-1-5b``) that every pip finds. The same line works in a clone installed
with ``pip install -e .`` (pip sees the distribution installed and adds the extra's
packages) and, once published, from the index.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "install_hint"]

#: the name to ``pip install``; the import name stays ``autofeedback``
DISTRIBUTION = "autofeedback-api"


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` of this distribution.

    >>> install_hint("mcp")
    "pip install 'autofeedback-api[mcp]'"
    """
    return f"pip install '{DISTRIBUTION}[{extra}]'"
