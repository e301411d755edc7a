"""Griffe extension: the project's docstrings as Markdown for the API reference.

The docstrings are written for ``help()`` and doctest (``tests/test_doctests.py`` runs
their examples): reST-style roles (``:class:`~autofeedback.Scanner```), ``::`` before a
literal block and ``>>>`` examples. Rendered as Markdown those would show the role names
and turn ``>>>`` into nested quotes, so each docstring is rewritten once, when Griffe
loads it: a role becomes a code span, ``::`` a colon, and each doctest run a ``pycon``
code block.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def to_markdown(text: str) -> str:
    """``text`` with roles as code spans and doctest runs fenced (a run ends at a blank
    line; ``tests/test_docs.py`` has the examples)."""
    text = _ROLE.sub(_role, text)
    out: list[str] = []
    fenced = example = False
    for line in text.splitlines():
        stripped = line.strip()
        if example and not stripped:  # a blank line ends a doctest run
            out += ["```", ""]
            example = False
            continue
        if not example and not fenced and stripped.startswith(">>>"):
            if out and out[-1].strip():
                out.append("")
            out.append("```pycon")
            example = True
        if example:
            out.append(line)
            continue
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or stripped != "::":
            out.append(line[:-1] if not fenced and line.endswith("::") else line)
    if example:
        out.append("```")
    return "\n".join(out)


class DocstringMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
