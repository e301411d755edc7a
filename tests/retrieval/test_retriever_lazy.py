"""Big specs and the first answer (issue 18 item 8): the catalog's names are embedded
on the first semantic comparison with the catalog's API names, not before the first
answer, and not for an unknown parameter, which is compared with its operation's
parameters only (issue 31); a big catalog is embedded in chunks behind a progress bar,
to the same vectors."""

from __future__ import annotations

from typing import Any

import numpy as np

from autofeedback import ApiCatalog, Scanner

WORDS = ["books", "authors", "orders", "users", "reviews", "stores", "items", "tags"]


def _catalog(n: int, tag: str) -> ApiCatalog:
    paths: dict[str, Any] = {}
    for i in range(n):
        a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
        paths[f"/{tag}{i}/{a}/{{id}}/{b}"] = {
            "get": {
                "operationId": f"{tag}List{a.title()}Of{b.title()}{i}",
                "description": f"List the {b} of one of the {a} ({tag} {i}).",
                "parameters": [{"name": f"{b}_limit", "in": "query", "schema": {}}],
                "responses": {},
            }
        }
    return ApiCatalog.from_obj({"openapi": "3.0.0", "paths": paths})


def test_a_right_request_does_not_wait_for_the_catalogs_names(api_retriever: Any) -> None:
    catalog = _catalog(300, "lazy")
    scanner = Scanner(catalog, retriever=api_retriever)
    found = list(scanner.iter_findings("GET /lazy7/tags/1/books", instruction="books of tag 1"))
    assert [f.code for f in found if f.severity == "error"] == []
    assert catalog not in api_retriever._preloaded  # names: not needed for this answer
    # an unknown parameter is compared with its operation's parameter: a handful of
    # names embedded, not the catalog's 308
    before = len(api_retriever._names)
    list(scanner.iter_findings("GET /lazy7/tags/1/books?books_limt=3"))
    assert catalog not in api_retriever._preloaded
    assert len(api_retriever._names) - before < 10
    # an unknown API name is compared with all 300: the catalog's names load, once
    list(scanner.iter_findings("<API>fetchAuthorCatalogue(limit=3)</API>"))
    assert catalog in api_retriever._preloaded


def test_chunked_embedding_with_a_progress_bar_gives_the_same_vectors(api_retriever: Any) -> None:
    from retriever import ApiRetriever

    texts = [f"list the {w} of store {i}" for i in range(600) for w in WORDS[:1]]
    shown = ApiRetriever(api_retriever.embedder, progress=True, cache_dir=api_retriever.cache_dir)
    plain = np.asarray(api_retriever.embedder.embed(texts), dtype=np.float32)
    chunked = shown._embed(texts, "embedding test texts")
    assert chunked.shape == plain.shape
    assert np.allclose(chunked, plain, atol=1e-5)


def test_a_catalog_is_freed_after_its_e2_verdicts_were_memoised(api_retriever: Any) -> None:
    # a log record's catalog: the E2 memo must not keep it (nor its scanner) alive
    import gc
    import weakref

    catalog = _catalog(20, "gone")
    scanner = Scanner(catalog, retriever=api_retriever)
    [f] = scanner.iter_findings("GET /Gone7/Tags/1/Books")  # E2.2: no name embedded yet
    assert f.code == "E2.2"
    alive = weakref.ref(catalog)
    del scanner, catalog
    gc.collect()
    assert alive() is None
