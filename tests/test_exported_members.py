"""Each package's ``__all__`` is exactly its public names, sorted (httpx's test)."""

from __future__ import annotations

import importlib
import types

import pytest


@pytest.mark.parametrize("package", ["autofeedback", "retriever", "doc_index"])
def test_all_is_exactly_the_public_names(package: str) -> None:
    module = importlib.import_module(package)
    public = {
        name
        for name, value in vars(module).items()
        # pytest's assertion rewriting adds "@py_builtins" to a plugin's packages
        if not name.startswith("_")
        and name.isidentifier()
        and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    public |= set(getattr(module, "_LAZY", {}))  # names loaded on first use
    assert set(module.__all__) == public
    for name in module.__all__:
        assert getattr(module, name) is not None

    # ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical
    def isort_key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
        return kind, name

    assert list(module.__all__) == sorted(module.__all__, key=isort_key)
