"""The official JSON-Schema-Test-Suite (../shared/data/json-schema-test-suite), file by
file, for every place a schema enters: function tools and MCP tools (2020-12, draft 7
and draft 4 named by ``$schema``), OpenAPI 3.0, OpenAPI 3.1 and Swagger 2 request bodies
(see benchmarks/_suite.py for how each suite schema is wrapped and judged).

The suite's ``remotes/`` folder is served by a real HTTP server on 127.0.0.1, and the
address the suite writes for it (http://localhost:1234/) is read from there through
:class:`autofeedback.RemoteRefs` (a mirror, the only origin allowed), so that ``$id``,
``$anchor``, ``$dynamicRef`` and remote ``$ref`` run.

Every judged suite test must agree (valid data draws no error finding, invalid data at
least one). The deliberate deviations are listed in benchmarks/_suite.py with their
reasons and run below as strict expected failures, so one that starts to agree is seen.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from autofeedback import RemoteRefs

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:  # benchmarks/ is a folder of scripts, not an installed package
    sys.path.insert(0, str(_REPO))

from benchmarks._suite import (  # noqa: E402
    _DEVIATIONS,
    DIALECTS,
    Case,
    FileRun,
    deviation,
    matches_file,
    run_file,
    serve_remotes,
    suite_files,
)


def _suite_root() -> Path | None:
    override = os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    data = Path(override) if override else _REPO.parent / "shared" / "data"
    root = data / "json-schema-test-suite"
    return root if (root / "tests").is_dir() else None


ROOT = _suite_root()
ABSENT = "the JSON-Schema-Test-Suite (../shared/data/json-schema-test-suite) is not here"
FILES = (
    [(d, f) for d in DIALECTS for f in suite_files(ROOT, DIALECTS[d].draft)]
    if ROOT is not None
    else [pytest.param("-", "-", marks=pytest.mark.skip(reason=ABSENT))]
)


@pytest.fixture(scope="module")
def remotes() -> Iterator[RemoteRefs | None]:
    """The suite's ``remotes/`` served on 127.0.0.1 (the folder beside the suite, else
    the project's copy in tests/data: the shared data holds ``tests/`` only), and the
    product told to read the suite's remote address from there (and from nowhere
    else)."""
    if ROOT is None:
        pytest.skip(ABSENT)
    with serve_remotes(ROOT) as refs:
        yield refs
    _run.cache_clear()  # its runs read that server


@functools.cache
def _run(dialect: str, file: str, remote_refs: RemoteRefs | None) -> FileRun:
    assert ROOT is not None
    return run_file(ROOT, DIALECTS[dialect], file, remote_refs)  # one catalog per file


def _disagreements(run: FileRun) -> list[Case]:
    return [c for c in run.cases if c.outcome in ("false error", "missed")]


@pytest.mark.parametrize(
    ("dialect", "file"), FILES, ids=[f"{d}/{f}" for d, f in FILES] if ROOT is not None else None
)
def test_suite_file(dialect: str, file: str, remotes: RemoteRefs | None) -> None:
    run = _run(dialect, file, remotes)
    judged = [c for c in run.cases if c.outcome != "skipped"]
    if not judged:
        pytest.skip(f"no group of {file} fits {dialect}: {run.cases[0].detail}")
    wrong = [c for c in _disagreements(run) if not deviation(c)]
    assert not wrong, "\n".join(
        f"{c.outcome}: {c.group} / {c.test}: data {c.data!r} {c.detail}" for c in wrong[:20]
    )


_DEVIATION_IDS = [f"{file}:{words or 'all'}:{outcome}" for file, words, outcome, _ in _DEVIATIONS]


@pytest.mark.parametrize("index", range(len(_DEVIATIONS)), ids=_DEVIATION_IDS)
def test_deliberate_deviation(
    index: int, request: pytest.FixtureRequest, remotes: RemoteRefs | None
) -> None:
    """Each deviation, for every dialect it shows in: an expected failure with its reason."""
    if ROOT is None:
        pytest.skip(ABSENT)
    file, words, outcome, reason = _DEVIATIONS[index]
    cases = [
        c
        for dialect in DIALECTS
        for f in suite_files(ROOT, DIALECTS[dialect].draft)
        if matches_file(f, file)
        for c in _run(dialect, f, remotes).cases
        if c.outcome == outcome and (words is None or words in c.group)
    ]
    if not cases:
        pytest.fail(f"the deviation {file} / {words} is listed but never seen")
    request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    assert all(c.outcome == "agree" for c in cases), reason
