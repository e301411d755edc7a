"""MkDocs hook: ``benchmarks/RESULTS.md`` as the site's "Results" page (``results.md``).

The benchmark scripts write that file (``benchmarks/_results.py``); the site shows it as
it is, so the measured tables are never copied into the docs by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "RESULTS.md"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "results.md", abs_src_path=str(RESULTS)))
    return files
