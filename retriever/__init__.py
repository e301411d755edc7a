"""The API retriever: which APIs fit an instruction, and how close two names are."""

from retriever._embedders import (
    DEFAULT_MODEL,
    Embedder,
    OnnxMiniLMEmbedder,
    SentenceTransformerEmbedder,
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
    "load_embedder",
    "split_identifier",
]
