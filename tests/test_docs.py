"""The documentation site builds strictly and covers what it promises (issue 28).

``mkdocs build --strict`` runs here because CI runs only the test command: a broken link
or anchor, a page left out of the navigation, or a docstring that mkdocstrings cannot
render fails the suite. It needs the ``docs`` extra (in ``dev``) and skips, saying so,
without it. The checks below it need nothing but the repository.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import autofeedback
from autofeedback.cli import _parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: one page per use, each one hop from the README
USES = [
    "scan.md",
    "proxy.md",
    "mcp-proxy.md",
    "audit.md",
    "pytest-plugin.md",
    "tool-calls.md",
    "http-guard.md",
    "loop.md",
    "runners.md",
    "sandbox.md",
    "data-flow.md",
]
#: pages of the entry points that decide forward / repair / feed back: each keeps a place
#: for what the repair policy does
DECIDING = [
    "proxy.md",
    "mcp-proxy.md",
    "audit.md",
    "tool-calls.md",
    "http-guard.md",
    "loop.md",
    "runners.md",
]


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _missing_docs_tools() -> str | None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return module
    return None


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    missing = _missing_docs_tools()
    if missing:
        pytest.skip(f"{missing} is not installed (the docs extra: pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the generated pages are there: the CLI reference, the API reference, the results
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--max-rounds" in cli and "mcp-proxy" in cli and "--input-format" in cli
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="autofeedback.FeedbackLoop"' in api and 'id="autofeedback.guard"' in api
    # docstring examples are highlighted Python sessions, not ">>>" quotes
    assert '<span class="gp">&gt;&gt;&gt; </span>' in api and "<blockquote>" not in api
    assert "Benchmark results" in (site / "results" / "index.html").read_text(encoding="utf-8")
    # the lead's place for the repair details is in the page source, not on the page
    proxy = (site / "mcp-proxy" / "index.html").read_text(encoding="utf-8")
    assert "<!-- lead: repair -->" in proxy


def test_the_readme_is_short_and_every_use_is_one_hop_away() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", text))
    assert set(USES) <= linked, sorted(set(USES) - linked)
    for page in linked:
        assert (DOCS / page).is_file(), page
    # the broken fence of issue 28 ("``` PyPI has no wheel of") is gone, here and there
    for path in [README, *DOCS.rglob("*.md")]:
        assert not re.search(r"^```[ \t]+\S", path.read_text(encoding="utf-8"), re.M), path


@pytest.mark.parametrize("page", DECIDING)
def test_each_deciding_entry_point_has_a_repairs_section(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    assert re.search(r"^## Repairs\n\n<!-- lead: repair -->", text, re.M), page


def test_the_api_reference_documents_every_public_name() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    named = re.findall(r"^::: autofeedback\.(\w+)$", text, re.M)
    assert sorted(named) == sorted(autofeedback.__all__)


def test_the_cli_reference_is_rendered_from_the_parser() -> None:
    rendered = _hook("cli_reference").render()
    parser = _parser({})
    commands = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands = dict(action.choices)
    assert set(commands) >= {"scan", "audit", "proxy", "mcp-proxy", "sandbox", "run"}
    for name, sub in commands.items():
        assert f"## `autofeedback {name}`" in rendered
        for action in sub._actions:
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
                for option in action.option_strings:
                    assert f"`{option}`" in rendered, (name, option)
    assert "`8787`" in rendered  # the proxy's default port, from the parser


def test_docstrings_become_markdown() -> None:
    pytest.importorskip("griffe", reason="griffe comes with the docs extra")
    to_markdown = _hook("griffe_markdown").to_markdown
    text = "See :class:`~a.B` and :func:`c.d`::\n\n    literal\n\n>>> f()\n1\n>>> g()\n\nAfter."
    assert to_markdown(text) == (
        "See `B` and `c.d`:\n\n    literal\n\n```pycon\n>>> f()\n1\n>>> g()\n```\n\nAfter."
    )
