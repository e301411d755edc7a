"""Start-up is a feature (issue 42): ``import autofeedback``, ``autofeedback --version``
and the pytest plugin of a run that does not use it import nothing heavy, each checked
in a fresh interpreter; a command imports what it needs when it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: what must wait for a command or a check that needs it
HEAVY = (
    "torch",
    "sentence_transformers",
    "faiss",
    "numpy",
    "jsonschema",
    "jsonschema_rs",
    "rfc3339_validator",
    "yaml",
    "requests",
    "httpx",
    "starlette",
    "uvicorn",
    "mcp",
    "openapi_core",
    "rich",
    "autofeedback.scanner._scan",
    "autofeedback.catalog._catalog",
    "autofeedback.decide",
    "autofeedback.checks",
    "autofeedback.integrations._adapter",
    "autofeedback.integrations._proxy",
)


def _imported(code: str) -> list[str]:
    """The :data:`HEAVY` modules in ``sys.modules`` after ``code``, in a new process."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_autofeedback_imports_nothing_heavy() -> None:
    assert _imported("import autofeedback") == []


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import io\nfrom autofeedback.cli import run\nassert run(['--version'], io.StringIO()) == 0"
    )
    assert _imported(code) == []


def test_help_imports_nothing_heavy() -> None:
    code = "import io\nfrom autofeedback.cli import run\nrun(['scan', '--help'], io.StringIO())"
    assert _imported(code) == []


def test_the_pytest_plugin_imports_nothing_heavy_until_a_spec_is_named() -> None:
    assert _imported("import pytest\nimport autofeedback.pytest_plugin") == []


def test_a_public_name_still_loads_on_first_use() -> None:
    code = "import autofeedback\nautofeedback.Scanner"
    assert "autofeedback.scanner._scan" in _imported(code)


def test_the_cli_names_the_repair_modes_of_the_decision() -> None:
    from autofeedback.cli import _REPAIR_MODES
    from autofeedback.decide import REPAIR_MODES

    assert _REPAIR_MODES == REPAIR_MODES


@pytest.mark.parametrize("name", ["Scanner", "ApiCatalog", "audit_lines", "InvalidPatternWarning"])
def test_lazy_names_are_the_real_objects(name: str) -> None:
    import autofeedback

    assert getattr(autofeedback, name).__name__ == name


@pytest.mark.parametrize(
    "home",
    ["frameworks", "llm", "parsing", "proxy", "responses", "runners", "sandbox", "sequences"],
)
def test_a_public_home_imports_nothing_heavy_until_a_name_is_used(home: str) -> None:
    assert _imported(f"import autofeedback.{home}") == []
