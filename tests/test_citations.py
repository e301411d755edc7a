"""A comment or docstring that sends the reader to a test file names one that exists.

Three did not (issue 39): ``tests/integrations/test_repairs.py``, ``test_proxy_repair.py``
and ``tests/test_llm_local.py`` were cited for what they never held. Paths are read from
the tests, the packages, the benchmarks and the docs; a bare ``test_x.py`` counts only in
a comment (in a string it is the name of a file a test writes, as pytester's are)."""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
#: a path from the repository root: tests/.../test_x.py
_PATH = re.compile(r"\btests/[\w/]+\.py\b")
#: a bare test file name: test_x.py
_NAME = re.compile(r"(?<![\w/])test_\w+\.py\b")
_SOURCES = ("autofeedback", "retriever", "doc_index", "benchmarks", "tests")


def _files() -> list[Path]:
    found = [p for d in _SOURCES for p in (ROOT / d).rglob("*.py")]
    found += [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    this = Path(__file__).resolve()  # it names missing files on purpose
    # not what lives in hidden folders (benchmarks/.work holds venvs and caches)
    return sorted(
        p
        for p in found
        if p.is_file()
        and p.resolve() != this
        and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
    )


def _comments(path: Path) -> list[tuple[int, str]]:
    """The comments and docstring-like strings of a Python file, by line."""
    out: list[tuple[int, str]] = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    previous = tokenize.NEWLINE
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
        elif tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT):
            out.append((tok.start[0], tok.string))  # a string standing alone: a docstring
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.type
    return out


def citations() -> list[tuple[str, str]]:
    """(where, the cited test file) for every citation of a test file."""
    names = {p.name for p in TESTS.rglob("test_*.py")}
    out: list[tuple[str, str]] = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        for line, cited in (
            (text.count("\n", 0, m.start()) + 1, m.group()) for m in _PATH.finditer(text)
        ):
            if not (ROOT / cited).is_file():
                out.append((f"{rel}:{line}", cited))
        if path.suffix == ".py":
            for line, comment in _comments(path):
                for m in _NAME.finditer(comment):
                    if m.group() not in names:
                        out.append((f"{rel}:{line}", m.group()))
    return out


def test_every_cited_test_file_exists() -> None:
    assert citations() == []


def test_a_citation_of_a_missing_file_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "tests" / "test_here.py"
    module.parent.mkdir()
    module.write_text(
        '"""See tests/test_there.py."""\n'
        "# and test_nowhere.py, but not test_here.py\n"
        'WRITTEN = "test_generated.py"  # a file the test writes\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "TESTS", tmp_path / "tests")
    monkeypatch.setattr(sys.modules[__name__], "_SOURCES", ("tests",))
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("tests/test_here.py\n", encoding="utf-8")
    assert citations() == [
        ("tests/test_here.py:1", "tests/test_there.py"),
        ("tests/test_here.py:2", "test_nowhere.py"),
    ]
