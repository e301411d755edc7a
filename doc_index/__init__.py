"""The RAG index over API documentation that the dynamic analysis searches to explain
server errors: semantic chunks of every operation's description, parameters and error
responses (plus extra Markdown docs) in FAISS, searchable per API."""

from doc_index._index import Chunk, DocIndex, Hit, IndexLoadError, build_or_load

__all__ = ["Chunk", "DocIndex", "Hit", "IndexLoadError", "build_or_load"]
