"""``DocIndex``: semantic chunks of the API documentation in a FAISS index.

Vectors are unit rows in ``faiss.IndexFlatIP`` (inner product = cosine similarity)
wrapped in ``faiss.IndexIDMap`` whose ids are chunk positions. A search restricted to one
API passes an ``IDSelectorBatch`` of that API's chunk ids plus the API-independent ones,
so the restriction happens inside FAISS and ``k`` is always filled when enough chunks
qualify. A flat index is exact, and the documentation of even a large spec is a few
thousand chunks, so nothing approximate is needed.

On disk an index is a directory::

    index.faiss    faiss.write_index of the IndexIDMap
    chunks.json    [{"text", "api", "kind"}, ...] in id order
    manifest.json  catalog fingerprint, docs fingerprint, embedder name, merge threshold,
                   format version; written last, so a half-written directory never loads
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from doc_index._chunking import MAX_CHUNK_CHARS, semantic_merge, split_sentences
from doc_index._lexical import code_tokens, idf_weights, lexical_bonus
from doc_index._sections import Section, catalog_sections, doc_sections, docs_fingerprint
from retriever._embedders import Embedder, load_embedder

__all__ = ["Chunk", "DocIndex", "Hit", "IndexLoadError", "build_or_load"]

FORMAT = "autofeedback-doc-index"
VERSION = 1
DEFAULT_MERGE_THRESHOLD = 0.75

_INDEX_FILE = "index.faiss"
_CHUNKS_FILE = "chunks.json"
_MANIFEST_FILE = "manifest.json"

Vectors = npt.NDArray[np.float32]


class IndexLoadError(AutoFeedbackError):
    """A saved document index is missing, corrupt or from an incompatible version."""

    def __init__(self, directory: Path, reason: str) -> None:
        self.directory = directory
        self.reason = reason
        super().__init__(f"cannot load document index from {str(directory)!r}: {reason}")


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of documentation.

    ``api`` is the operation it documents, or ``None`` for API-independent text (a
    global error table, a guide); ``kind`` is ``"description"``, ``"parameter"``,
    ``"error"`` or ``"doc"``.
    """

    text: str
    api: str | None
    kind: str


@dataclass(frozen=True)
class Hit:
    """A chunk and its cosine similarity to the query."""

    chunk: Chunk
    score: float


class DocIndex:
    """Searchable documentation of a catalog (and of extra Markdown files).

    >>> index = DocIndex.build(catalog)                                  # doctest: +SKIP
    >>> index.search("429 rate limit", api="get-an-album")[0].chunk.text  # doctest: +SKIP
    '429: The app has exceeded its rate limits.'
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        index: Any,
        embedder: Embedder,
        *,
        apis: Sequence[str],
        catalog_fingerprint: str,
        docs_fingerprint: str,
        merge_threshold: float,
    ) -> None:
        self.chunks: tuple[Chunk, ...] = tuple(chunks)
        self.embedder = embedder
        self.apis: tuple[str, ...] = tuple(apis)
        self.catalog_fingerprint = catalog_fingerprint
        self.docs_fingerprint = docs_fingerprint
        self.merge_threshold = merge_threshold
        self._index = index
        self._vectors = _stored_vectors(index, len(self.chunks))
        self._tokens = [code_tokens(c.text) for c in self.chunks]
        self._idf = idf_weights(self._tokens)
        self._postings: dict[str, list[int]] = {}
        for i, tokens in enumerate(self._tokens):
            for token in tokens:
                self._postings.setdefault(token, []).append(i)
        shared = [i for i, c in enumerate(self.chunks) if c.api is None]
        per_api: dict[str, list[int]] = {name: [] for name in self.apis}
        for i, chunk in enumerate(self.chunks):
            if chunk.api is not None:
                per_api.setdefault(chunk.api, []).append(i)
        # ids ascending, so a restricted search sees chunks in the same order as a full one
        self._allowed: dict[str, npt.NDArray[np.int64]] = {
            name: np.array(sorted(ids + shared), dtype=np.int64) for name, ids in per_api.items()
        }

    def __len__(self) -> int:
        return len(self.chunks)

    def __repr__(self) -> str:
        return f"<DocIndex {len(self.chunks)} chunks, {len(self.apis)} APIs>"

    # -- building -------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        catalog: ApiCatalog,
        embedder: Embedder | None = None,
        *,
        docs: Sequence[Path] = (),
        merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    ) -> DocIndex:
        """Split, semantically chunk and embed the documentation of ``catalog`` and of the
        Markdown/text files ``docs``.

        >>> index = DocIndex.build(ApiCatalog.from_file("spotify_oas.json"))  # doctest: +SKIP
        """
        threshold = _check_threshold(merge_threshold)
        emb = embedder if embedder is not None else load_embedder()
        doc_paths = tuple(Path(d) for d in docs)
        sections = [*catalog_sections(catalog), *doc_sections(doc_paths, catalog)]
        chunks = _chunk_sections(sections, emb, threshold)
        vectors = _embed_unique(emb, [c.text for c in chunks])
        index = _new_index(vectors)
        return cls(
            chunks,
            index,
            emb,
            apis=catalog.names,
            catalog_fingerprint=catalog.fingerprint,
            docs_fingerprint=docs_fingerprint(doc_paths),
            merge_threshold=threshold,
        )

    # -- searching ------------------------------------------------------------------

    def search(self, query: str, *, api: str | None = None, k: int = 3) -> list[Hit]:
        """The ``k`` chunks closest to ``query``, best first; with ``api``, only that API's
        chunks and the API-independent ones. Chunks with identical text (the same 429
        explanation on every operation) are returned once.

        The score is the cosine similarity plus a bonus of up to
        :data:`~doc_index._lexical.LEXICAL_WEIGHT` for code-like tokens (``429``,
        ``info_code``, ``20000``) that the chunk shares with the query.

        >>> index.search("info_code 20000", api="get_history", k=1)  # doctest: +SKIP
        [Hit(chunk=Chunk(text='400: info_code 20000: ...', ...), score=0.87)]
        """
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigurationError(f"k must be a positive integer, got {k!r}")
        if not isinstance(query, str):
            raise ConfigurationError(f"query must be a string, got {type(query).__name__}")
        if api is not None and api not in self._allowed:
            known = ", ".join(self.apis[:10]) + (", ..." if len(self.apis) > 10 else "")
            raise ConfigurationError(f"unknown API {api!r} for this index; known: {known}")
        allowed = self._allowed[api] if api is not None else None
        available = len(self.chunks) if allowed is None else len(allowed)
        if available == 0 or not query.strip():
            return []
        vector = self._embed_query(query)
        query_tokens = code_tokens(query)
        lexical = self._lexical_candidates(query_tokens, api)
        fetch = min(available, max(k * 4, 16))
        while True:
            dense = self._dense_candidates(vector, fetch, allowed)
            # Every chunk outside ``dense`` and ``lexical`` scores below each dense
            # candidate, so once the dense candidates hold k distinct texts the top k of
            # the union is the exact top k.
            if len({self.chunks[i].text for i in dense}) >= k or fetch >= available:
                break
            fetch = min(available, fetch * 4)
        candidates = sorted(set(dense) | lexical)
        cosines = self._vectors[candidates] @ vector[0]
        scored = [
            (float(cos) + lexical_bonus(query_tokens, self._tokens[i], self._idf), i)
            for cos, i in zip(cosines, candidates, strict=True)
        ]
        scored.sort(key=lambda t: (-t[0], t[1]))
        hits = _unique_by_text([Hit(self.chunks[i], score) for score, i in scored])
        return hits[:k]

    def _embed_query(self, query: str) -> Vectors:
        vector = np.ascontiguousarray(self.embedder.embed([query]), dtype=np.float32)
        if vector.ndim != 2 or vector.shape != (1, self._vectors.shape[1]):
            raise ConfigurationError(
                f"embedder {self.embedder.name!r} returned vectors of shape {vector.shape}, "
                f"the index holds {self._vectors.shape[1]}-dimensional vectors"
            )
        faiss.normalize_L2(vector)
        return vector

    def _dense_candidates(
        self, vector: Vectors, fetch: int, allowed: npt.NDArray[np.int64] | None
    ) -> list[int]:
        if allowed is None:
            _, ids = self._index.search(vector, fetch)
        else:
            # ``selector`` must outlive the search: ``params.sel`` holds no reference to it
            selector = faiss.IDSelectorBatch(allowed)
            params = faiss.SearchParameters()
            params.sel = selector
            _, ids = self._index.search(vector, fetch, params=params)
        return [int(i) for i in ids[0] if i >= 0]

    def _lexical_candidates(self, query_tokens: frozenset[str], api: str | None) -> set[int]:
        found: set[int] = set()
        for token in query_tokens:
            found.update(self._postings.get(token, ()))
        if api is not None:
            found = {i for i in found if self.chunks[i].api in (api, None)}
        return found

    # -- persistence ------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Write the index to ``directory`` (created if needed).

        >>> index.save(Path(".autofeedback/doc-index"))  # doctest: +SKIP
        """
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            # the manifest goes last and is removed first: a directory whose write was
            # interrupted has no manifest and is rebuilt instead of half-loaded
            (directory / _MANIFEST_FILE).unlink(missing_ok=True)
            _atomic_write(directory / _INDEX_FILE, self._write_faiss)
            chunks = [{"text": c.text, "api": c.api, "kind": c.kind} for c in self.chunks]
            _atomic_write_text(directory / _CHUNKS_FILE, json.dumps(chunks, ensure_ascii=False))
            _atomic_write_text(directory / _MANIFEST_FILE, json.dumps(self._manifest(), indent=2))
        except (OSError, RuntimeError) as exc:  # faiss reports I/O errors as RuntimeError
            raise ConfigurationError(
                f"cannot save document index to {str(directory)!r}: {exc}"
            ) from exc

    def _write_faiss(self, path: Path) -> None:
        faiss.write_index(self._index, str(path))

    def _manifest(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "catalog_fingerprint": self.catalog_fingerprint,
            "docs_fingerprint": self.docs_fingerprint,
            "embedder": self.embedder.name,
            "merge_threshold": self.merge_threshold,
            "dimension": int(self._index.d),
            "chunks": len(self.chunks),
            "apis": list(self.apis),
        }

    @classmethod
    def load(cls, directory: Path, embedder: Embedder | None = None) -> DocIndex:
        """Read an index written by :meth:`save`. Raises :class:`IndexLoadError` when the
        directory is missing or corrupt, :class:`ConfigurationError` when ``embedder`` is
        not the one the index was built with.

        >>> index = DocIndex.load(Path(".autofeedback/doc-index"))  # doctest: +SKIP
        """
        directory = Path(directory)
        manifest = _read_manifest(directory)
        chunks = _read_chunks(directory, manifest)
        try:
            index = faiss.read_index(str(directory / _INDEX_FILE))
        except RuntimeError as exc:
            raise IndexLoadError(directory, f"{_INDEX_FILE} is unreadable ({exc})") from exc
        if not isinstance(index, faiss.IndexIDMap) or not isinstance(
            faiss.downcast_index(index.index), faiss.IndexFlatIP
        ):
            raise IndexLoadError(
                directory, f"{_INDEX_FILE} is a {type(index).__name__}, not IndexIDMap(IndexFlatIP)"
            )
        if index.ntotal != len(chunks) or index.d != manifest["dimension"]:
            raise IndexLoadError(
                directory,
                f"{_INDEX_FILE} holds {index.ntotal} vectors of dimension {index.d}, "
                f"the manifest says {len(chunks)} of dimension {manifest['dimension']}",
            )
        if embedder is None:
            embedder = load_embedder(manifest["embedder"])
        elif embedder.name != manifest["embedder"]:
            raise ConfigurationError(
                f"the index in {str(directory)!r} was built with embedder "
                f"{manifest['embedder']!r}, not {embedder.name!r}; rebuild it"
            )
        try:
            return cls(
                chunks,
                index,
                embedder,
                apis=manifest["apis"],
                catalog_fingerprint=manifest["catalog_fingerprint"],
                docs_fingerprint=manifest["docs_fingerprint"],
                merge_threshold=manifest["merge_threshold"],
            )
        except ValueError as exc:
            raise IndexLoadError(directory, str(exc)) from exc

    def is_current(self, catalog: ApiCatalog, *, docs: Sequence[Path] | None = None) -> bool:
        """Whether the index was built from this catalog (and, when given, these docs).

        >>> index.is_current(ApiCatalog.from_file("spotify_oas.json"))  # doctest: +SKIP
        True
        """
        if catalog.fingerprint != self.catalog_fingerprint:
            return False
        return docs is None or docs_fingerprint(tuple(Path(d) for d in docs)) == (
            self.docs_fingerprint
        )


def build_or_load(
    catalog: ApiCatalog,
    directory: Path,
    embedder: Embedder | None = None,
    docs: Sequence[Path] = (),
    *,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
) -> DocIndex:
    """The index saved in ``directory`` when it was built from this catalog, these docs,
    this embedder and threshold; otherwise a fresh build, saved there.

    >>> index = build_or_load(catalog, Path(".autofeedback/doc-index"))  # doctest: +SKIP
    """
    directory = Path(directory)
    threshold = _check_threshold(merge_threshold)
    emb = embedder if embedder is not None else load_embedder()
    doc_paths = tuple(Path(d) for d in docs)
    try:
        manifest = _read_manifest(directory)
    except IndexLoadError:
        manifest = None
    if (
        manifest is not None
        and manifest["catalog_fingerprint"] == catalog.fingerprint
        and manifest["docs_fingerprint"] == docs_fingerprint(doc_paths)
        and manifest["embedder"] == emb.name
        and manifest["merge_threshold"] == threshold
    ):
        try:
            return DocIndex.load(directory, emb)
        except IndexLoadError:
            pass  # corrupt: rebuild below
    index = DocIndex.build(catalog, emb, docs=doc_paths, merge_threshold=threshold)
    index.save(directory)
    return index


# -- helpers ------------------------------------------------------------------------


def _check_threshold(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigurationError(f"merge_threshold must be a number, got {value!r}")
    if not -1.0 <= value <= 1.0:
        raise ConfigurationError(f"merge_threshold is a cosine similarity in [-1, 1], got {value}")
    return float(value)


def _chunk_sections(sections: Sequence[Section], emb: Embedder, threshold: float) -> list[Chunk]:
    pieces = [split_sentences(s.body) for s in sections]
    decide = [
        len(ps) > 1 and not (s.whole and _joined_len(ps) <= MAX_CHUNK_CHARS)
        for s, ps in zip(sections, pieces, strict=True)
    ]
    # only sections with a merge to decide need their sentences embedded
    vectors = _embed_unique(emb, [p for ps, d in zip(pieces, decide, strict=True) if d for p in ps])
    chunks: list[Chunk] = []
    seen: set[Chunk] = set()
    start = 0
    for section, sentences, semantic in zip(sections, pieces, decide, strict=True):
        if semantic:
            merged = semantic_merge(sentences, vectors[start : start + len(sentences)], threshold)
            start += len(sentences)
        else:
            merged = [" ".join(sentences)] if sentences else []
        for text in merged:
            chunk = Chunk(f"{section.label}: {text}", section.api, section.kind)
            # a spec that lists the same parameter twice yields one chunk, not two
            if chunk not in seen:
                seen.add(chunk)
                chunks.append(chunk)
    return chunks


def _joined_len(sentences: Sequence[str]) -> int:
    return sum(len(s) for s in sentences) + len(sentences) - 1


def _embed_unique(emb: Embedder, texts: Sequence[str]) -> Vectors:
    """Embed each distinct text once: a spec repeats the same 401/403/429 explanations
    on every operation."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = np.ascontiguousarray(emb.embed(unique), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(unique):
        raise ConfigurationError(
            f"embedder {emb.name!r} returned shape {vectors.shape} for {len(unique)} texts"
        )
    faiss.normalize_L2(vectors)
    row = {text: i for i, text in enumerate(unique)}
    out: Vectors = vectors[[row[t] for t in texts]]
    return out


def _new_index(vectors: Vectors) -> Any:
    dim = vectors.shape[1] if vectors.shape[0] else 0
    index = faiss.IndexIDMap(faiss.IndexFlatIP(dim))
    if vectors.shape[0]:
        index.add_with_ids(vectors, np.arange(vectors.shape[0], dtype=np.int64))
    return index


def _stored_vectors(index: Any, count: int) -> Vectors:
    """The vectors inside an ``IndexIDMap(IndexFlatIP)`` whose ids are ``0..count-1``,
    for scoring the lexical candidates FAISS did not return."""
    ids = faiss.vector_to_array(index.id_map)
    if index.ntotal != count or not np.array_equal(ids, np.arange(count)):
        raise ValueError("the FAISS index does not hold one vector per chunk in chunk order")
    flat = faiss.downcast_index(index.index)
    if count == 0:
        return np.zeros((0, index.d), dtype=np.float32)
    vectors: Vectors = np.asarray(flat.reconstruct_n(0, count), dtype=np.float32)
    return vectors


def _unique_by_text(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out: list[Hit] = []
    for hit in hits:
        if hit.chunk.text not in seen:
            seen.add(hit.chunk.text)
            out.append(hit)
    return out


def _read_json(directory: Path, name: str) -> Any:
    try:
        return json.loads((directory / name).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexLoadError(directory, f"{name} is missing") from exc
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise IndexLoadError(directory, f"{name} is unreadable ({exc})") from exc


def _read_manifest(directory: Path) -> dict[str, Any]:
    if not directory.is_dir():
        raise IndexLoadError(directory, "no such directory")
    manifest = _read_json(directory, _MANIFEST_FILE)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise IndexLoadError(directory, f"{_MANIFEST_FILE} is not a document-index manifest")
    if manifest.get("version") != VERSION:
        raise IndexLoadError(
            directory,
            f"format version {manifest.get('version')!r}, this library reads {VERSION}; rebuild",
        )
    expected: Mapping[str, Callable[[Any], bool]] = {
        "catalog_fingerprint": lambda v: isinstance(v, str),
        "docs_fingerprint": lambda v: isinstance(v, str),
        "embedder": lambda v: isinstance(v, str),
        "merge_threshold": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "dimension": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "chunks": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "apis": lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
    }
    for key, valid in expected.items():
        if not valid(manifest.get(key)):
            raise IndexLoadError(directory, f"{_MANIFEST_FILE} has a bad or missing {key!r}")
    return manifest


def _read_chunks(directory: Path, manifest: Mapping[str, Any]) -> list[Chunk]:
    raw = _read_json(directory, _CHUNKS_FILE)
    if not isinstance(raw, list) or len(raw) != manifest["chunks"]:
        raise IndexLoadError(
            directory, f"{_CHUNKS_FILE} does not hold the {manifest['chunks']} chunks expected"
        )
    chunks: list[Chunk] = []
    for i, item in enumerate(raw):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("text"), str)
            and isinstance(item.get("kind"), str)
            and (item.get("api") is None or isinstance(item.get("api"), str))
        ):
            raise IndexLoadError(directory, f"{_CHUNKS_FILE}: chunk {i} is malformed")
        chunks.append(Chunk(item["text"], item["api"], item["kind"]))
    return chunks


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _atomic_write_text(path: Path, text: str) -> None:
    def write(target: Path) -> None:
        target.write_text(text, encoding="utf-8")

    _atomic_write(path, write)
