"""Install lines name this project and extras it defines (issue 28).

The distribution is ``autofeedback-api`` (``autofeedback`` on the index is another
project), and every extra is spelt in its normalized form (PEP 685): pip 23.2, the one
Python 3.11's ``venv`` ships, finds ``local-1-5b`` but not ``local-1.5b``.
"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

import pytest

from autofeedback.core._install import DISTRIBUTION, install_hint

ROOT = Path(__file__).resolve().parents[1]


def _setup() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config


EXTRAS = dict(_setup()["options.extras_require"])


def _requirements(extra: str) -> set[str]:
    return {line.strip() for line in EXTRAS[extra].splitlines() if line.strip()}


def test_the_distribution_name_is_the_one_the_code_names() -> None:
    assert _setup()["metadata"]["name"] == DISTRIBUTION
    assert DISTRIBUTION != "autofeedback"  # taken on the index by an unrelated project


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_every_extra_is_normalized(extra: str) -> None:
    # PEP 685 / PEP 503 normalization: lower case, runs of -_. become one -
    assert re.sub(r"[-_.]+", "-", extra).lower() == extra


def test_the_docs_extra_is_in_dev_and_never_pinned_exactly() -> None:
    assert _requirements("docs") <= _requirements("dev")
    assert all("==" not in r for r in _requirements("docs"))


def _install_lines() -> list[tuple[str, str]]:
    """(where, line) for every line that installs this project with extras."""
    found = []
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / ".ci" / "run"]
    sources += sorted((ROOT / "autofeedback").rglob("*.py"))
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?:autofeedback[\w-]*|\.)\[[^\]]*\]", line) and "install" in line:
                found.append((f"{path.relative_to(ROOT)}:{number}", line))
    return found


def test_install_lines_are_found() -> None:
    # the scan below would pass on nothing: it sees the README's and the code's lines
    where = {w.split(":")[0] for w, _ in _install_lines()}
    assert {"README.md", ".ci/run", "autofeedback/core/_install.py"} <= where


@pytest.mark.parametrize("where, line", _install_lines(), ids=[w for w, _ in _install_lines()])
def test_every_install_line_names_this_distribution_and_a_defined_extra(
    where: str, line: str
) -> None:
    for name, extras in re.findall(r"(autofeedback[\w-]*|\.)\[([^\]]*)\]", line):
        if name == "." and not re.search(r"-e\s+[\"']?\.\[", line):
            continue  # a Markdown link or an index, not `pip install -e ".[extra]"`
        assert name in (".", DISTRIBUTION), f"{where}: installs {name!r}, not {DISTRIBUTION!r}"
        for extra in extras.split(","):
            assert extra.strip() in EXTRAS, f"{where}: no extra {extra.strip()!r} in setup.cfg"


def test_the_code_asks_for_extras_that_exist() -> None:
    named = []
    for path in sorted((ROOT / "autofeedback").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "install_hint"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                named.append(node.args[0].value)
    assert len(named) >= 8  # mcp, proxy, graphql, dask, langchain, local, local-1-5b, ...
    assert set(named) <= set(EXTRAS)
    assert install_hint("mcp") == f"pip install '{DISTRIBUTION}[mcp]'"
