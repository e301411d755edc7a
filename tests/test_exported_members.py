"""Each package's ``__all__`` is exactly its public names, sorted (httpx's test)."""

from __future__ import annotations

import importlib
import types

import pytest

#: the package facades and the public modules that are the homes of the rest
PUBLIC = [
    "autofeedback",
    "autofeedback.frameworks",
    "autofeedback.llm",
    "autofeedback.parsing",
    "autofeedback.proxy",
    "autofeedback.responses",
    "autofeedback.runners",
    "autofeedback.sandbox",
    "autofeedback.sequences",
    "retriever",
    "doc_index",
]


@pytest.mark.parametrize("package", PUBLIC)
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


def test_a_moved_name_still_works_for_a_release_and_names_its_new_home() -> None:
    import autofeedback
    from autofeedback.sandbox import Sandbox

    with pytest.warns(
        DeprecationWarning, match=r"autofeedback\.Sandbox moved to autofeedback\.sandbox"
    ):
        assert autofeedback.Sandbox is Sandbox
    assert "Sandbox" not in autofeedback.__all__
    with pytest.raises(AttributeError):
        autofeedback.NotAName  # noqa: B018


@pytest.mark.parametrize("name", sorted(__import__("autofeedback")._MOVED))
def test_every_moved_name_is_public_in_its_home(name: str) -> None:
    import autofeedback

    home = importlib.import_module(autofeedback._MOVED[name])
    assert name in home.__all__


def test_the_sequence_checker_keeps_its_old_flow_name_for_a_release() -> None:
    import autofeedback.flow
    from autofeedback.sequences import SequenceChecker, check_sequence

    with pytest.warns(DeprecationWarning, match=r"moved to autofeedback\.sequences"):
        assert autofeedback.flow.SequenceChecker is SequenceChecker
    with pytest.warns(DeprecationWarning, match=r"moved to autofeedback\.sequences"):
        assert autofeedback.flow.check_sequence is check_sequence
    assert "SequenceChecker" not in autofeedback.flow.__all__
