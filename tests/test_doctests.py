"""The examples in the docstrings run, and show what the code does today: a user copies
them first. Two had gone stale (an E3 that the retriever now reports as E3.3, a file
example marked to skip) before this test ran them."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("autofeedback", "retriever", "doc_index")
#: optional dependencies (extras): a module that needs one is skipped where it is absent
OPTIONAL = {"llama_cpp", "mcp", "langchain_core", "dask", "distributed", "graphql", "openai"}


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {e.name}, an optional dependency not installed here")
        raise
    monkeypatch.chdir(ROOT)  # examples name files by their path in the repository
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in finder.find(module, name):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
