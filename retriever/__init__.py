"""The API retriever: which APIs fit an instruction, and how close two names are."""

from retriever._embedders import (
    DEFAULT_MODEL,
    Embedder,
    OnnxMiniLMEmbedder,
    SentenceTransformerEmbedder,
    default_backend,
    load_embedder,
)
from retriever._retriever import ApiRetriever, Ranked, split_identifier

__all__ = [
    "DEFAULT_MODEL",
    "ApiRetriever",
    "Embedder",
    "OnnxMiniLMEmbedder",
    "Ranked",
    "SentenceTransformerEmbedder",
    "default_backend",
    "load_embedder",
    "split_identifier",
]
