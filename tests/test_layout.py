"""Import direction between the folders of ``autofeedback/`` (see each folder's ``__init__``).

Lower folders never import higher ones, and nothing below the facade imports ``cli``:
the rule is read from the source with ``ast``, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autofeedback"

# folder -> the autofeedback folders its modules must never import ("" is the top-level core)
FORBIDDEN: dict[str, set[str]] = {
    "_parse": {"checks", "flow", "decide", "loop", "audit", "integrations", "cli"},
    "_specs": {"checks", "flow", "decide", "loop", "audit", "integrations", "cli"},
    "checks": {"flow", "decide", "loop", "audit", "integrations", "cli"},
    "flow": {"decide", "loop", "audit", "integrations", "cli"},
    # the one decision (forward, repair, feed back, stop) every entry point shares
    "decide": {"loop", "audit", "integrations", "cli"},
    "loop": {"audit", "integrations", "cli"},
    "audit": {"loop", "integrations", "cli"},
    "integrations": {"audit", "cli"},
    "": {"decide", "loop", "audit", "integrations", "cli"},
    # the command line, one module per command, stands above every folder
    "cli": set(),
}
# the facade and the entry points stand above every folder
ABOVE = {"__init__.py", "pytest_plugin.py", "__main__.py", "cli"}


def _folder_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "autofeedback":
        return None
    if len(parts) == 1:
        return ""
    return "" if parts[1].startswith("_") and parts[1] not in FORBIDDEN else parts[1]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # `from autofeedback import cli` names a module through the package
            if node.module == "autofeedback":
                found.update(f"autofeedback.{alias.name}" for alias in node.names)
    return found


def _modules() -> list[Path]:
    return sorted(
        path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in ABOVE
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    relative = path.relative_to(PACKAGE)
    folder = relative.parts[0] if len(relative.parts) > 1 else ""
    bad = sorted(
        name
        for name in _imports(path)
        if _folder_of(name) in FORBIDDEN[folder] or name.split(".")[:2] == ["autofeedback", "cli"]
    )
    assert not bad, f"{relative} imports {bad}, above its folder {folder or '(top)'!r}"


def test_every_folder_has_a_rule() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders <= set(FORBIDDEN), f"no import rule for {sorted(folders - set(FORBIDDEN))}"


def test_the_rule_sees_a_violation(tmp_path: Path) -> None:
    # the check itself can fail: a lazy import of the loop inside a function is found
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from autofeedback.loop._loop import FeedbackLoop\n")
    assert _folder_of(next(iter(_imports(module)))) == "loop"
