"""``autofeedback index build``: the RAG index over a spec's documentation (and extra
Markdown), built or reused, that ``autofeedback run --index`` reads."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from autofeedback.cli._common import _Parser, _require, _Usage


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``index`` and returns its ``build`` parser (the one configuration fills)."""
    ix = sub.add_parser("index", help="the RAG index over a spec's documentation")
    ix_sub = ix.add_subparsers(dest="index_command", required=True, parser_class=_Parser)
    ib = ix_sub.add_parser(
        "build",
        help="build (or reuse, when the spec is unchanged) an index",
        description="Chunk a spec's documentation (and extra Markdown) into a FAISS index "
        "saved in a folder; `autofeedback run --index DIR` reads it.",
        epilog="""examples:
  autofeedback index build --spec api.yaml --docs docs/ --index api-index/""",
    )
    ib.add_argument("--spec", help="spec file (required)")
    ib.add_argument(
        "--docs",
        action="append",
        default=[],
        help="a Markdown/text file or folder of extra docs (repeatable)",
    )
    ib.add_argument(
        "--index",
        metavar="DIR",
        help="index folder, the one `run --index` reads (required)",
    )
    # -o is a report FILE elsewhere; kept here, hidden, for scripts written before --index
    ib.add_argument("-o", "--output", help=argparse.SUPPRESS)
    ib.add_argument("--embedder", help="embedding model name or local model directory")
    return ib  # type: ignore[no-any-return]


def _doc_paths(items: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            paths += sorted(x for x in p.rglob("*") if x.suffix.lower() in (".md", ".txt", ".rst"))
        elif p.is_file():
            paths.append(p)
        else:
            raise _Usage(f"index build: no such file or folder: {item}")
    return paths


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    # -o, kept for scripts written before --index
    args.index = args.index or args.output
    _require(args, "spec", "index")
    return _index(args, out)


def _index(args: argparse.Namespace, out: IO[str]) -> int:
    from autofeedback.catalog._catalog import ApiCatalog
    from doc_index import build_or_load
    from retriever import load_embedder

    catalog = ApiCatalog.from_file(args.spec)
    embedder = load_embedder(args.embedder) if args.embedder else None
    index = build_or_load(catalog, Path(args.index), embedder, _doc_paths(args.docs))
    out.write(f"index of {args.spec} in {args.index}: {len(index)} chunks\n")
    return 0
