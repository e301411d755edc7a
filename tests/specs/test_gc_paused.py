"""Spec loads pause the cycle collector (a big spec's load set off full collections that
walked its million new objects for nothing) and always hand it back as they found it: a
library that left it off would leak every reference cycle of the user's process."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from autofeedback._specs import load_spec, load_spec_file
from autofeedback.core._exceptions import SpecError

TOOL = {"name": "ping", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_while_a_spec_loads_and_on_after(
    tmp_path: Path, collector_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback._specs import _functions

    seen: list[bool] = []
    real = _functions._load_function

    def spying(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_functions, "_load_function", spying)
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps([TOOL]), encoding="utf-8")
    load_spec_file(spec, cache_dir=tmp_path / "cache")
    load_spec([TOOL], source="<tools>")
    assert seen == [False, False]
    assert gc.isenabled()


@pytest.mark.parametrize(
    "text",
    ['{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}}', "[1, 2"],
)
def test_a_load_that_fails_turns_the_collector_back_on(
    tmp_path: Path, collector_on: None, text: str
) -> None:
    spec = tmp_path / "broken.json"
    spec.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError):
        load_spec_file(spec, cache_dir=tmp_path / "cache")
    assert gc.isenabled()
    with pytest.raises(SpecError):
        load_spec(text, source="<text>")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(tmp_path: Path) -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        load_spec([TOOL], source="<tools>")
        spec = tmp_path / "tools.json"
        spec.write_text(json.dumps([TOOL]), encoding="utf-8")
        load_spec_file(spec, cache_dir=tmp_path / "cache")
        load_spec_file(spec, cache_dir=tmp_path / "cache")  # from the cache
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
