"""A name is embedded once (issue 31): every scanner of a process shares the default
retriever, and name vectors outlive the process in the cache folder, exactly."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autofeedback import ApiCatalog, Scanner, audit_lines
from retriever import ApiRetriever, load_embedder


class Counting:
    """The real embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = load_embedder()
        self.name = self.inner.name
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += texts
        return self.inner.embed(texts)


def test_scanners_share_the_default_retriever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path))
    tools = [{"name": "f", "parameters": {"type": "object", "properties": {}}}]
    one = Scanner(ApiCatalog.from_tools(tools))
    two = Scanner(ApiCatalog.from_tools(tools))
    assert one.retriever is two.retriever


def test_an_audit_of_many_tool_lists_embeds_a_repeated_name_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path))
    import json

    lines = []
    for i in range(4):  # four distinct tool lists, the same made-up name in each
        tool = {
            "name": f"get_weather_{i}",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
        call = {"name": "fetch_forecast", "arguments": {"city": "Paris"}}
        lines.append(json.dumps({"id": i, "tools": [tool], "call": call}))
    from autofeedback.scanner import _scan

    counting = Counting()
    monkeypatch.setattr(_scan, "_retrievers", {str(tmp_path): ApiRetriever(counting)})
    results = list(audit_lines(lines, None))
    assert all(r.findings and r.findings[0].code.startswith("E2") for r in results)
    assert counting.texts.count("fetch forecast") == 1


def test_name_vectors_are_kept_on_disk_exactly(tmp_path: Path) -> None:
    first = Counting()
    before = ApiRetriever(first, cache_dir=tmp_path).name_similarity("townName", ["city"])
    second = Counting()
    after = ApiRetriever(second, cache_dir=tmp_path).name_similarity("townName", ["city"])
    assert "town name" in first.texts and second.texts == []  # read back, not embedded
    assert before == after  # the same float32 vectors: the same scores, bit for bit
    direct = np.asarray(load_embedder().embed(["town name"]))[0]
    assert (
        ApiRetriever(Counting(), cache_dir=tmp_path)._name_vectors(["townName"])[0] == direct
    ).all()


def test_the_onnx_threads_do_not_spin_between_runs() -> None:
    # names come a few at a time: spinning worker threads cost as much CPU as the model
    from retriever import OnnxMiniLMEmbedder

    session, _ = OnnxMiniLMEmbedder()._load()
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def _made_up_names_log(n: int) -> list[str]:
    import json

    lines = []
    for i in range(n):
        tool = {
            "name": f"get_weather_{i}",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
        call = {"name": f"fetch_forecast_number_{i}", "arguments": {"town_{i}": "Paris"}}
        lines.append(json.dumps({"id": i, "tools": [tool], "call": call}))
    return lines


class Batches(Counting):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        return super().embed(texts)


@pytest.mark.parametrize("lookahead", [0, 8])
def test_reading_ahead_embeds_a_window_in_one_batch_with_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookahead: int
) -> None:
    from autofeedback.scanner import _scan

    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path))
    lines = _made_up_names_log(8)
    embedder = Batches()
    monkeypatch.setattr(_scan, "_retrievers", {str(tmp_path): ApiRetriever(embedder)})
    results = [r.as_dict() for r in audit_lines(lines, None, lookahead=lookahead)]
    assert all(r["findings"][0]["code"].startswith("E2") for r in results)
    if lookahead:
        assert embedder.calls == 1  # eight records' names and catalogs, one batch
    else:
        assert embedder.calls >= 8
    reference = tmp_path / "reference"
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(reference))
    monkeypatch.setattr(_scan, "_retrievers", {str(reference): ApiRetriever(Counting())})
    assert results == [r.as_dict() for r in audit_lines(lines, None)]
