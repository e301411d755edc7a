"""doc_index: semantic chunking, FAISS search restricted per API, persistence.

Everything runs on the real all-MiniLM-L6-v2 model and real FAISS. Retrieval over the
real Spotify spec is tested through the explanation step in ``test_explain.py``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from autofeedback import ApiCatalog, ConfigurationError
from doc_index import Chunk, DocIndex, Hit, IndexLoadError, build_or_load
from doc_index._chunking import semantic_merge, split_sentences
from retriever import Embedder, load_embedder

CLOSE_A = "The access token has expired and must be refreshed before retrying."
CLOSE_B = "An expired access token has to be refreshed before the request is retried."
DISTANT = "Album cover images are returned in three sizes, widest first."

WEATHER: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Weather", "version": "1.0"},
    "servers": [{"url": "https://weather.example/v1"}],
    "paths": {
        "/history": {
            "get": {
                "operationId": "get_history",
                "description": "Historical weather observations for a city on one day.",
                "parameters": [
                    {
                        "name": "date",
                        "in": "query",
                        "required": True,
                        "description": "The day to report, as YYYY-MM-DD.",
                        "schema": {"type": "string", "format": "date"},
                    },
                    {
                        "name": "units",
                        "in": "query",
                        "description": "Unit system of the temperatures.",
                        "schema": {"type": "string", "enum": ["metric", "imperial"]},
                    },
                ],
                "responses": {
                    "200": {"description": "The observations."},
                    "400": {
                        "description": "info_code 20000: the parameter `date` must be YYYY-MM-DD.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                        },
                    },
                    "401": {"description": "info_code 10001: the API key is missing or invalid."},
                    "404": {
                        "description": "info_code 20001: no weather station is known near "
                        "the given city."
                    },
                },
            }
        },
        "/forecast": {
            "get": {
                "operationId": "get_forecast",
                "description": f"{CLOSE_A} {CLOSE_B} {DISTANT}",
                "parameters": [
                    {
                        "name": "days",
                        "in": "query",
                        "description": "How many days to forecast.",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 14},
                    }
                ],
                "responses": {
                    "200": {"description": "The forecast."},
                    "429": {
                        "description": "info_code 30000: the daily request quota of your "
                        "plan is exhausted; wait until midnight UTC."
                    },
                },
            }
        },
    },
    "components": {
        "schemas": {
            "Error": {
                "type": "object",
                "description": "An error carries a numeric info_code and a message.",
                "properties": {
                    "info_code": {"type": "integer"},
                    "message": {"type": "string"},
                },
            }
        }
    },
}

GUIDE = """\
# Weather API guide

## Global error codes

info_code 99999: the service is down for maintenance; retry after a few minutes.

## get_forecast

Forecasts beyond seven days are extrapolated from climate averages.
"""


def weather_catalog(spec: dict[str, Any] | None = None) -> ApiCatalog:
    return ApiCatalog.from_obj(spec or WEATHER, source="weather.json")


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder()


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs") / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def index(embedder: Embedder, guide: Path) -> DocIndex:
    return DocIndex.build(weather_catalog(), embedder, docs=[guide])


def texts(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk.text for h in hits]


# -- what is indexed ----------------------------------------------------------------


def test_every_kind_of_documentation_is_indexed(index: DocIndex) -> None:
    by_kind = {(c.api, c.kind) for c in index.chunks}
    assert {
        ("get_history", "description"),
        ("get_history", "parameter"),
        ("get_history", "error"),
        ("get_forecast", "error"),
        (None, "doc"),
        ("get_forecast", "doc"),
    } <= by_kind
    chunks = set(index.chunks)
    # a short error response stays one chunk, its schema's description included
    text = (
        "400: info_code 20000: the parameter `date` must be YYYY-MM-DD. "
        "An error carries a numeric info_code and a message."
    )
    assert Chunk(text, "get_history", "error") in chunks
    assert any(
        c.text.startswith("parameter `units` (in query, string, optional)")
        and "metric, imperial" in c.text
        for c in index.chunks
    )


def test_markdown_sections_naming_an_operation_belong_to_it(index: DocIndex) -> None:
    docs = {c.text: c.api for c in index.chunks if c.kind == "doc"}
    [maintenance] = [t for t in docs if "99999" in t]
    [extrapolated] = [t for t in docs if "extrapolated" in t]
    assert docs[maintenance] is None
    assert docs[extrapolated] == "get_forecast"
    assert maintenance.startswith("Weather API guide > Global error codes: ")


# -- semantic chunking (Figure 5) ---------------------------------------------------


def test_semantic_merge_joins_close_sentences_and_keeps_distant_ones_apart(
    embedder: Embedder,
) -> None:
    sentences = [CLOSE_A, CLOSE_B, DISTANT]
    vectors = embedder.embed(sentences)
    assert float(vectors[0] @ vectors[1]) >= 0.75 > float(vectors[1] @ vectors[2])
    assert semantic_merge(sentences, vectors, 0.75) == [f"{CLOSE_A} {CLOSE_B}", DISTANT]
    assert semantic_merge(sentences, vectors, 0.99) == sentences
    assert semantic_merge(sentences, vectors, -1.0) == [" ".join(sentences)]


def test_built_index_holds_semantic_chunks(index: DocIndex) -> None:
    description = [
        c.text for c in index.chunks if c.kind == "description" and c.api == "get_forecast"
    ]
    label = "get_forecast (GET /forecast): "
    assert description == [f"{label}{CLOSE_A} {CLOSE_B}", f"{label}{DISTANT}"]


def test_merge_threshold_controls_chunking(embedder: Embedder) -> None:
    catalog = weather_catalog()
    apart = DocIndex.build(catalog, embedder, merge_threshold=1.0)
    together = DocIndex.build(catalog, embedder, merge_threshold=-1.0)

    def forecast(ix: DocIndex) -> int:
        return sum(c.kind == "description" and c.api == "get_forecast" for c in ix.chunks)

    assert (forecast(apart), forecast(together)) == (3, 1)


def test_split_sentences_keeps_sentences_whole() -> None:
    text = "Bad or expired\ntoken. This can happen if the user revoked a token.\n- or ask again"
    assert split_sentences(text) == [
        "Bad or expired token.",
        "This can happen if the user revoked a token.",
        "- or ask again",
    ]
    long = "word " * 200
    assert all(len(p) <= 300 for p in split_sentences(long))


# -- search ---------------------------------------------------------------------------


def test_terse_code_retrieves_its_explanation(index: DocIndex) -> None:
    for api in (None, "get_history"):
        [best, *_] = index.search("400 Bad Request info_code 20000", api=api)
        assert "YYYY-MM-DD" in best.chunk.text
        assert best.chunk.api == "get_history"
    [best] = index.search("info_code 30000", k=1)
    assert "quota" in best.chunk.text


def test_search_restricted_to_an_api_excludes_other_apis(index: DocIndex) -> None:
    query = "429 info_code 30000 daily request quota exhausted"
    [best, *_] = index.search(query)
    assert best.chunk.api == "get_forecast"
    hits = index.search(query, api="get_history", k=len(index))
    assert hits
    assert {h.chunk.api for h in hits} <= {"get_history", None}
    assert not any("30000" in t for t in texts(hits))
    # API-independent chunks stay searchable under a restriction
    [best, *_] = index.search("info_code 99999", api="get_history")
    assert best.chunk.api is None and "maintenance" in best.chunk.text


def test_search_results_are_ordered_and_deterministic(index: DocIndex) -> None:
    hits = index.search("API key missing", k=5)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(set(texts(hits))) == 5
    assert index.search("API key missing", k=5) == hits


def test_k_larger_than_the_index_returns_everything_once(index: DocIndex) -> None:
    hits = index.search("weather", k=10_000)
    assert len(hits) == len({c.text for c in index.chunks})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a positive integer"),
        ({"api": "get_weather"}, "unknown API 'get_weather'"),
    ],
)
def test_bad_search_arguments_are_clear_errors(
    index: DocIndex, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        index.search("anything", **kwargs)


def test_empty_query_and_empty_catalog(embedder: Embedder) -> None:
    empty = DocIndex.build(ApiCatalog([]), embedder)
    assert len(empty) == 0
    assert empty.search("429") == []


@pytest.mark.parametrize("threshold", [1.5, float("nan"), "high"])
def test_bad_merge_threshold(embedder: Embedder, threshold: Any) -> None:
    with pytest.raises(ConfigurationError, match="merge_threshold"):
        DocIndex.build(weather_catalog(), embedder, merge_threshold=threshold)


def test_missing_doc_file_is_a_clear_error(embedder: Embedder, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read documentation file"):
        DocIndex.build(weather_catalog(), embedder, docs=[tmp_path / "nope.md"])


# -- persistence ----------------------------------------------------------------------


QUERIES = [
    ("400 info_code 20000", "get_history"),
    ("quota exhausted", None),
    ("maintenance", "get_forecast"),
]


def test_save_load_round_trip(index: DocIndex, embedder: Embedder, tmp_path: Path) -> None:
    index.save(tmp_path / "ix")
    loaded = DocIndex.load(tmp_path / "ix", embedder)
    assert loaded.chunks == index.chunks
    assert loaded.apis == index.apis
    for query, api in QUERIES:
        assert loaded.search(query, api=api, k=4) == index.search(query, api=api, k=4)
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    assert manifest["catalog_fingerprint"] == weather_catalog().fingerprint
    assert manifest["embedder"] == embedder.name
    assert manifest["merge_threshold"] == 0.75


def test_is_current_follows_the_spec(index: DocIndex, guide: Path) -> None:
    assert index.is_current(weather_catalog())
    assert index.is_current(weather_catalog(), docs=[guide])
    changed = copy.deepcopy(WEATHER)
    changed["paths"]["/history"]["get"]["responses"]["400"]["description"] = "Bad date."
    assert not index.is_current(weather_catalog(changed))


def test_build_or_load_rebuilds_only_on_change(embedder: Embedder, tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE, encoding="utf-8")

    def index_file_id() -> int:
        return (directory / "index.faiss").stat().st_ino

    first = build_or_load(weather_catalog(), directory, embedder, docs=[guide])
    built = index_file_id()
    again = build_or_load(weather_catalog(), directory, embedder, docs=[guide])
    assert index_file_id() == built  # loaded, not rewritten
    assert again.chunks == first.chunks

    guide.write_text(GUIDE + "\n## Units\n\nWind speed is in metres per second.\n")
    with_units = build_or_load(weather_catalog(), directory, embedder, docs=[guide])
    assert index_file_id() != built
    assert any("metres per second" in c.text for c in with_units.chunks)

    changed = copy.deepcopy(WEATHER)
    del changed["paths"]["/forecast"]
    smaller = build_or_load(weather_catalog(changed), directory, embedder, docs=[guide])
    assert smaller.apis == ("get_history",)
    assert DocIndex.load(directory, embedder).is_current(weather_catalog(changed))


class _Renamed:
    """The real model under another name, as a differently configured embedder would be."""

    def __init__(self, inner: Embedder, name: str) -> None:
        self.inner = inner
        self.name = name

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed(texts)


@pytest.fixture()
def saved(index: DocIndex, tmp_path: Path) -> Path:
    directory = tmp_path / "ix"
    index.save(directory)
    return directory


def _corrupt_manifest(d: Path) -> None:
    (d / "manifest.json").write_text("{not json")


def _old_version(d: Path) -> None:
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["version"] = 999
    (d / "manifest.json").write_text(json.dumps(manifest))


def _no_manifest(d: Path) -> None:
    (d / "manifest.json").unlink()


def _garbage_faiss(d: Path) -> None:
    (d / "index.faiss").write_bytes(b"garbage" * 20)


def _short_chunks(d: Path) -> None:
    chunks = json.loads((d / "chunks.json").read_text())
    (d / "chunks.json").write_text(json.dumps(chunks[:-1]))


def _malformed_chunk(d: Path) -> None:
    chunks = json.loads((d / "chunks.json").read_text())
    chunks[0] = {"text": 3}
    (d / "chunks.json").write_text(json.dumps(chunks))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_no_manifest, "manifest.json is missing"),
        (_corrupt_manifest, "manifest.json is unreadable"),
        (_old_version, "format version 999"),
        (_garbage_faiss, "index.faiss is unreadable"),
        (_short_chunks, "chunks.json does not hold"),
        (_malformed_chunk, "chunk 0 is malformed"),
    ],
)
def test_corrupt_directory_is_a_clear_error(
    saved: Path, embedder: Embedder, damage: Any, message: str
) -> None:
    damage(saved)
    with pytest.raises(IndexLoadError, match=message) as info:
        DocIndex.load(saved, embedder)
    assert str(saved) in str(info.value)


def test_build_or_load_repairs_a_corrupt_directory(
    saved: Path, embedder: Embedder, guide: Path
) -> None:
    _garbage_faiss(saved)
    rebuilt = build_or_load(weather_catalog(), saved, embedder, docs=[guide])
    assert DocIndex.load(saved, embedder).chunks == rebuilt.chunks


def test_missing_directory_is_a_clear_error(tmp_path: Path, embedder: Embedder) -> None:
    with pytest.raises(IndexLoadError, match="no such directory"):
        DocIndex.load(tmp_path / "absent", embedder)


def test_loading_with_another_embedder_is_refused(saved: Path, embedder: Embedder) -> None:
    with pytest.raises(ConfigurationError, match="built with embedder"):
        DocIndex.load(saved, _Renamed(embedder, "other-model"))
    # build_or_load rebuilds for the new embedder instead
    rebuilt = build_or_load(weather_catalog(), saved, _Renamed(embedder, "other-model"))
    assert rebuilt.embedder.name == "other-model"


def test_load_without_embedder_uses_the_recorded_one(saved: Path) -> None:
    loaded = DocIndex.load(saved)
    assert loaded.embedder.name == load_embedder().name
    assert loaded.search("info_code 20000", k=1)[0].chunk.api == "get_history"
