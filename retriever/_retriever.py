"""``ApiRetriever``: rank a catalog's operations for an instruction, and compare names.

Operations are embedded as text (their name split into words, their description and
their parameter names). The matrix is cached on disk per catalog fingerprint and
embedder, so a second process does not re-encode the spec; name embeddings are kept
in an in-memory LRU because identifier similarity runs for every unknown name.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._cache import atomic_write, default_cache_dir
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._model import Operation
from retriever._embedders import Embedder, load_embedder

__all__ = ["ApiRetriever", "Ranked", "default_cache_dir", "operation_text", "split_identifier"]

_log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

#: Bump when :func:`operation_text` changes, so old disk caches are not reused.
_TEXT_VERSION = 1
_NAME_CACHE_SIZE = 4096
_QUERY_CACHE_SIZE = 256
#: bounds of what one retriever keeps for the catalogs it served: the names of their
#: operations and parameters (about 1.5 KB a vector) and their operation matrices. A
#: process-wide retriever serves every tool list of a log; past a bound it starts over.
_PINNED_MAX = 50_000
_MATRICES_MAX = 64
#: texts per embedding call while a progress bar is shown, and the fewest that show one
_CHUNK = 256
_PROGRESS_MIN = 512
#: BM25's share of the hybrid score; 0.2-0.3 was best on every dataset of
#: benchmarks/retrieval.py (picked on those data: there is no held-out split).
_BM25_WEIGHT = 0.3

_PLACEHOLDER = re.compile(r"[{}<>:]")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "get",
        "give",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "show",
        "tell",
        "that",
        "the",
        "this",
        "to",
        "what",
        "which",
        "with",
        "you",
    }
)


@dataclass(frozen=True)
class Ranked:
    """One ranked API: its catalog name and a score (higher is better)."""

    name: str
    score: float


def split_identifier(name: str) -> str:
    """An identifier as lower-case words: camelCase, snake_case, kebab-case, dots and
    ``METHOD /path/{var}`` are all split.

    >>> split_identifier("getUserInfo"), split_identifier("GET /movie/{movie_id}/credits")
    ('get user info', 'get movie movie id credits')
    """
    words: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", _PLACEHOLDER.sub(" ", name)):
        words.extend(w.lower() for w in _WORD.findall(chunk))
    return " ".join(words)


def operation_text(op: Operation) -> str:
    """The text an operation is embedded as: split name, description, parameter names.

    >>> operation_text(Operation("getUserInfo", "Fetch a user.", ))
    'get user info. Fetch a user.'
    """
    parts = [split_identifier(op.name)]
    if op.is_http:
        # an operationId can hide the path, which often says more ("albums id tracks")
        route = split_identifier(f"{op.method} {op.path}")
        if route != parts[0]:
            parts[0] += f" ({route})"
    description = " ".join(op.description.split())
    if description:
        parts.append(description)
    params = list(dict.fromkeys(split_identifier(p.name) for p in op.parameters))
    if params:
        parts.append("parameters: " + ", ".join(p for p in params if p))
    return ". ".join(p.rstrip(".") for p in parts if p) + ("." if description or params else "")


class ApiRetriever:
    """Ranks a catalog's APIs for an instruction by embedding similarity (optionally
    fused with BM25), and scores how close two identifiers are.

    >>> retriever = ApiRetriever()                                     # doctest: +SKIP
    >>> retriever.rank("search for the movie Titanic", tmdb, k=1)      # doctest: +SKIP
    [Ranked(name='GET_search-movie', score=0.46)]
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        hybrid: bool = False,
        cache_dir: Path | None = None,
        progress: bool | None = None,
    ) -> None:
        self._embedder = embedder
        self.hybrid = hybrid
        #: a progress bar on stderr while a big catalog is embedded: ``None`` shows it
        #: for 512 texts or more when stderr is a terminal
        self.progress = progress
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._lock = threading.Lock()
        self._matrices: dict[tuple[str, str], Vectors] = {}
        self._bm25: dict[str, Any] = {}
        self._names: OrderedDict[str, Vectors] = OrderedDict()
        # catalogs' own names, kept for the retriever's life (not evicted by the LRU)
        self._pinned: dict[str, Vectors] = {}
        # catalogs whose names are pinned (weakly: a catalog's names go with it)
        self._preloaded: weakref.WeakSet[ApiCatalog] = weakref.WeakSet()
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._store: NameStore | None = None

    @property
    def embedder(self) -> Embedder:
        """The embedder, loaded on first use so constructing a retriever is free."""
        if self._embedder is None:
            self._embedder = load_embedder()
        return self._embedder

    # -- ranking --------------------------------------------------------------------

    def rank(self, instruction: str, catalog: ApiCatalog, k: int | None = None) -> list[Ranked]:
        """The catalog's operations, best first (the top ``k``, or all when ``k`` is None).

        Scores are cosine similarities; with ``hybrid`` they are ``0.7 * dense + 0.3 * BM25``,
        each min-max normalised over the catalog (so in [0, 1]).
        An operation name listed twice in the catalog appears once, with its best score.

        >>> ApiRetriever().rank("weather in Paris", catalog, k=1)[0].name   # doctest: +SKIP
        'get_weather'
        """
        if k is not None and k < 0:
            raise ConfigurationError(f"k must be a non-negative number or None, got {k}")
        if len(catalog) == 0 or k == 0:
            return []
        matrix = self.operation_vectors(catalog)
        query = self._query_vector(instruction)
        scores = matrix @ query
        if self.hybrid:
            scores = _fuse(scores, self._bm25_scores(instruction, catalog))
        return _top(scores, catalog, k)

    def _query_vector(self, instruction: str) -> Vectors:
        # the same instruction is ranked once per request of a task: embed it once
        with self._lock:
            hit = self._queries.get(instruction)
            if hit is not None:
                self._queries.move_to_end(instruction)
                return hit
        vec: Vectors = self.embedder.embed([instruction])[0]
        with self._lock:
            self._queries[instruction] = vec
            while len(self._queries) > _QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vec

    def rank_bm25(
        self, instruction: str, catalog: ApiCatalog, k: int | None = None
    ) -> list[Ranked]:
        """BM25 alone over the same operation texts (the lexical half of ``hybrid``);
        a baseline for benchmarks.

        >>> ApiRetriever().rank_bm25("weather in Paris", catalog, k=1)[0].name  # doctest: +SKIP
        'get_weather'
        """
        if k is not None and k < 0:
            raise ConfigurationError(f"k must be a non-negative number or None, got {k}")
        if len(catalog) == 0 or k == 0:
            return []
        return _top(self._bm25_scores(instruction, catalog), catalog, k)

    def operation_vectors(self, catalog: ApiCatalog) -> Vectors:
        """The ``(len(catalog), dim)`` embedding matrix of the catalog's operations,
        from memory, the disk cache, or the embedder (then written to disk)."""
        key = (catalog.fingerprint, self.embedder.name)
        with self._lock:
            cached = self._matrices.get(key)
        if cached is not None:
            return cached
        path = self._cache_path(catalog)
        matrix = _load_matrix(path, len(catalog))
        if matrix is None:
            texts = [operation_text(op) for op in catalog.operations]
            matrix = self._embed(texts, f"embedding {len(texts):,} operations")
            _save_matrix(path, matrix)
        with self._lock:
            if len(self._matrices) >= _MATRICES_MAX:
                self._matrices.clear()
            self._matrices[key] = matrix
        return matrix

    def _embed(self, texts: Sequence[str], what: str) -> Vectors:
        """``texts`` embedded in chunks, with a progress bar on stderr (see ``progress``):
        a 5,000-operation spec takes half a minute on two cores, and says so."""
        show = self.progress
        if show is None:
            show = len(texts) >= _PROGRESS_MIN and sys.stderr.isatty()
        if not show or len(texts) <= _CHUNK:
            return np.ascontiguousarray(self.embedder.embed(texts), dtype=np.float32)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        parts: list[Vectors] = []
        columns = (
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(what, total=len(texts))
            for start in range(0, len(texts), _CHUNK):
                chunk = texts[start : start + _CHUNK]
                parts.append(np.asarray(self.embedder.embed(chunk), dtype=np.float32))
                bar.advance(task, len(chunk))
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def _cache_path(self, catalog: ApiCatalog, kind: str = "") -> Path:
        embedder = self.embedder.name
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder)[:40]
        # the slug may collide for two model paths; the hash keeps them apart
        digest = hashlib.sha256(f"{embedder}\0{_TEXT_VERSION}".encode()).hexdigest()[:8]
        return self.cache_dir / "retriever" / f"{catalog.fingerprint}{kind}-{slug}-{digest}.npy"

    def preload_names(self, catalog: ApiCatalog) -> None:
        """Embed every API and parameter name of ``catalog`` once, in one batch, and keep
        them for this retriever's life; names already in the on-disk store are read from
        it: on a spec of 1,500 operations the name checks (E2.3, E3.3) then embed only
        the model's own names, in this run and the next."""
        self.prefetch((), [catalog])

    def prefetch(self, names: Sequence[str], catalogs: Sequence[ApiCatalog] = ()) -> None:
        """Have the vectors of ``names`` and of every name of ``catalogs`` ready, all that
        are not yet in memory or in the on-disk store embedded in one batch: an audit
        calls this for the names a window of records will compare, since embedding them
        together costs a third of embedding them one by one.

        >>> retriever.prefetch(["fetch_forecast"], [catalog])          # doctest: +SKIP
        """
        with self._lock:
            todo = list(dict.fromkeys(c for c in catalogs if c not in self._preloaded))
            queries = [
                t
                for t in dict.fromkeys(split_identifier(n) or n for n in names)
                if t not in self._pinned and t not in self._names
            ]
        own = [_catalog_texts(c) for c in todo]
        texts = list(dict.fromkeys([*queries, *(t for group in own for t in group)]))
        if not texts:
            return
        total = sum(len(group) for group in own)
        what = f"embedding {total:,} API and parameter names" if total else ""
        vectors = self._fetch(texts, what)
        with self._lock:
            for catalog, group in zip(todo, own, strict=True):
                if len(self._pinned) + len(group) > _PINNED_MAX:
                    self._pinned.clear()
                    self._preloaded.clear()
                self._pinned.update((t, vectors[t]) for t in group)
                self._preloaded.add(catalog)
            for text in queries:
                self._names[text] = vectors[text]
            while len(self._names) > _NAME_CACHE_SIZE:
                self._names.popitem(last=False)

    def _bm25_scores(self, instruction: str, catalog: ApiCatalog) -> npt.NDArray[np.float64]:
        with self._lock:
            bm25 = self._bm25.get(catalog.fingerprint)
        if bm25 is None:
            from rank_bm25 import BM25Okapi

            corpus = [_tokens(operation_text(op)) or ["_"] for op in catalog.operations]
            bm25 = BM25Okapi(corpus)
            with self._lock:
                self._bm25[catalog.fingerprint] = bm25
        return np.asarray(bm25.get_scores(_tokens(instruction)), dtype=np.float64)

    # -- names ----------------------------------------------------------------------

    def name_similarity(self, name: str, candidates: Sequence[str]) -> list[Ranked]:
        """``candidates`` by cosine similarity of their split identifiers to ``name``'s,
        best first.

        >>> r = ApiRetriever()                                          # doctest: +SKIP
        >>> r.name_similarity("getUserInfo", ["deleteUser", "get_user_information"])[0].name
        ... # doctest: +SKIP
        'get_user_information'
        """
        if not candidates:
            return []
        vectors = self._name_vectors([name, *candidates])
        scores = vectors[1:] @ vectors[0]
        order = np.argsort(-scores, kind="stable")
        return [Ranked(candidates[int(i)], float(scores[int(i)])) for i in order]

    def _name_vectors(self, names: Sequence[str]) -> Vectors:
        texts = [split_identifier(n) or n for n in names]
        found: dict[str, Vectors] = {}
        with self._lock:
            for t in texts:
                vec = self._pinned.get(t)
                if vec is None:
                    vec = self._names.get(t)
                    if vec is not None:
                        self._names.move_to_end(t)
                if vec is not None:
                    found[t] = vec
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            stored = self._fetch(missing)
            with self._lock:
                for text in missing:
                    found[text] = self._names[text] = stored[text]
                while len(self._names) > _NAME_CACHE_SIZE:
                    self._names.popitem(last=False)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    def _fetch(self, texts: Sequence[str], what: str = "") -> dict[str, Vectors]:
        """Vectors of ``texts`` (distinct) from the on-disk store, the rest embedded in
        one batch and stored."""
        store = self._name_store()
        stored = store.get(texts)
        fresh = [t for t in texts if t not in stored]
        if fresh:
            vectors = self._embed(fresh, what or f"embedding {len(fresh):,} names")
            new = dict(zip(fresh, vectors, strict=True))
            store.put(new)
            stored.update(new)
        return stored

    def _name_store(self) -> NameStore:
        """The on-disk store of name vectors for this embedder: the names a model gets
        wrong repeat across the records of a log and across runs."""
        store = self._store
        if store is None:
            embedder = self.embedder.name
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder)[:40]
            digest = hashlib.sha256(f"{embedder}\0{_TEXT_VERSION}".encode()).hexdigest()[:8]
            path = self.cache_dir / "retriever" / f"names-{slug}-{digest}.sqlite"
            store = self._store = NameStore(path)
        return store


class NameStore:
    """Name vectors on disk (SQLite, one row per text), shared by runs and processes.

    A cache only: any error reading or writing it is logged and costs an embedding, never
    a result. Bounded: past :data:`_STORE_MAX` rows the oldest are dropped. The vectors
    are stored as their float32 bytes, so a stored vector is the embedded one exactly.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: Any = None
        self._broken = False
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        if self._db is None and not self._broken:
            import sqlite3

            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("CREATE TABLE IF NOT EXISTS names (text TEXT PRIMARY KEY, vector BLOB)")
                self._db = db
            except Exception as exc:  # a cache that cannot be opened costs only speed
                _log.info("name vector store %s unusable: %s", self.path, exc)
                self._broken = True
        return self._db

    def get(self, texts: Sequence[str]) -> dict[str, Vectors]:
        """The stored vectors of ``texts`` (those it has)."""
        out: dict[str, Vectors] = {}
        with self._lock:
            db = self._connect()
            if db is None:
                return out
            try:
                for start in range(0, len(texts), 500):
                    chunk = list(texts[start : start + 500])
                    marks = ",".join("?" * len(chunk))
                    rows = db.execute(
                        f"SELECT text, vector FROM names WHERE text IN ({marks})",
                        chunk,
                    )
                    for text, blob in rows:
                        vec = np.frombuffer(blob, dtype=np.float32)
                        if vec.ndim == 1 and vec.size and np.isfinite(vec).all():
                            out[text] = vec
            except Exception as exc:
                _log.info("name vector store %s unreadable: %s", self.path, exc)
        return out

    def put(self, vectors: dict[str, Vectors]) -> None:
        """Store ``vectors`` (text -> vector), dropping the oldest rows past the bound."""
        with self._lock:
            db = self._connect()
            if db is None:
                return
            try:
                with db:
                    db.executemany(
                        "INSERT OR REPLACE INTO names (text, vector) VALUES (?, ?)",
                        [
                            (t, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                            for t, v in vectors.items()
                        ],
                    )
                    (rows,) = db.execute("SELECT max(rowid) - min(rowid) FROM names").fetchone()
                    if rows is not None and rows >= _STORE_MAX:
                        db.execute(
                            "DELETE FROM names WHERE rowid < (SELECT max(rowid) FROM names) - ?",
                            (_STORE_MAX // 2,),
                        )
            except Exception as exc:
                _log.info("name vector store %s not written: %s", self.path, exc)


#: rows kept in a :class:`NameStore` (about 1.6 KB each)
_STORE_MAX = 65_536


# -- helpers ------------------------------------------------------------------------


def _catalog_texts(catalog: ApiCatalog) -> list[str]:
    """The texts a catalog's API and parameter names are embedded as."""
    return sorted(
        {split_identifier(n) or n for n in catalog.names}
        | {split_identifier(p.name) or p.name for op in catalog for p in op.parameters}
    )


def _top(scores: npt.NDArray[Any], catalog: ApiCatalog, k: int | None) -> list[Ranked]:
    """Best first; an operation name listed twice keeps its best score."""
    out: list[Ranked] = []
    seen: set[str] = set()
    for i in np.argsort(-scores, kind="stable"):
        name = catalog.operations[int(i)].name
        if name in seen:
            continue
        seen.add(name)
        out.append(Ranked(name, float(scores[int(i)])))
        if k is not None and len(out) == k:
            break
    return out


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(split_identifier(text)) if t not in _STOPWORDS]


def _minmax(scores: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    low, high = float(scores.min()), float(scores.max())
    if high <= low:
        return np.zeros(len(scores), dtype=np.float64)
    return (scores.astype(np.float64) - low) / (high - low)


def _fuse(dense: npt.NDArray[Any], sparse: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """Weighted sum of min-max-normalised scores. Measured in benchmarks/retrieval.py:
    reciprocal-rank fusion lost 16 points of top-1 on BFCL's 2-4 function catalogs (one
    rank step there is a big jump), this kept or raised top-1 on every dataset."""
    dense_part = (1 - _BM25_WEIGHT) * _minmax(dense)
    fused: npt.NDArray[np.float64] = dense_part + _BM25_WEIGHT * _minmax(sparse)
    return fused


def _load_matrix(path: Path, rows: int) -> Vectors | None:
    """The cached matrix, or None when absent, unreadable or not the expected shape."""
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as exc:
        _log.info("ignoring unreadable embedding cache %s: %s", path, exc)
        return None
    if (
        not isinstance(data, np.ndarray)
        or data.ndim != 2
        or data.shape[0] != rows
        or data.dtype != np.float32
        or not np.isfinite(data).all()
    ):
        _log.info("ignoring embedding cache %s with unexpected contents", path)
        return None
    return data


def _save_matrix(path: Path, matrix: Vectors) -> None:
    atomic_write(path, lambda fh: np.save(fh, matrix, allow_pickle=False))
