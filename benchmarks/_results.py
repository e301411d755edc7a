"""Write one benchmark's table into ``benchmarks/RESULTS.md``, leaving the others alone.

Each benchmark owns one ``## Title`` section: the exact command that produced it, then
its markdown body. Re-running a benchmark replaces its section in place; a new one is
appended. Notes written by hand below a :data:`BY_HAND` line stay: the script's new
body goes above them (the notes say which run they read, and may need an update).
Writes are atomic and serialised by a lock file, so two benchmarks finishing at once do
not lose each other's sections.

    >>> write_section("Retrieval", "python benchmarks/retrieval.py", table)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["BY_HAND", "RESULTS", "replace_section", "write_section"]

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
_HEADER = "# Benchmark results\n\nEach section is written by the script named in its command.\n"


#: the line above which a section is the script's, below which it is a person's
BY_HAND = "<!-- notes by hand: kept when the script rewrites this section -->"


def replace_section(document: str, title: str, section: str) -> str:
    """``document`` with its ``## title`` section (up to the next ``## `` heading)
    replaced by ``section``, or with ``section`` appended when there is none. What the
    old section holds from a :data:`BY_HAND` line on is kept, after the new text.

    >>> replace_section("# R\\n\\n## A\\nold\\n\\n## B\\nb\\n", "A", "## A\\nnew\\n")
    '# R\\n\\n## A\\nnew\\n\\n## B\\nb\\n'
    >>> doc = f"## A\\nold\\n\\n{BY_HAND}\\nwhy\\n"
    >>> replace_section(doc, "A", "## A\\nnew\\n") == f"## A\\nnew\\n\\n{BY_HAND}\\nwhy\\n"
    True
    """
    heading = re.compile(rf"^## {re.escape(title)}[ \t]*$", re.MULTILINE)
    m = heading.search(document)
    if m is None:
        base = document.rstrip("\n")
        return (base + "\n\n" if base else "") + section
    nxt = re.compile(r"^## ", re.MULTILINE).search(document, m.end())
    end = nxt.start() if nxt else len(document)
    old = document[m.start() : end]
    notes = old.find(BY_HAND)
    if notes >= 0 and BY_HAND not in section:
        section = section.rstrip("\n") + "\n\n" + old[notes:].rstrip("\n") + "\n"
    tail = document[end:]
    return document[: m.start()] + section + ("\n" + tail if tail else "")


def write_section(title: str, command: str, body_markdown: str, path: Path = RESULTS) -> None:
    """Replace or append the ``## title`` section of ``RESULTS.md``: the command that
    produced it in a code block, then ``body_markdown``.

    >>> write_section("Detection", "python benchmarks/detection.py", table)  # doctest: +SKIP
    """
    if "\n" in title or not title.strip():
        raise ValueError(f"a section title is one non-empty line, got {title!r}")
    section = f"## {title}\n\n```\n{command}\n```\n\n{body_markdown.strip()}\n"
    with _locked(path):
        old = path.read_text(encoding="utf-8") if path.exists() else _HEADER
        new = replace_section(old, title, section)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(new)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    # Lock the folder, not the file: the file is replaced by rename, and a lock file
    # would be one more untracked file in the checkout.
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
