"""benchmarks/tasks.py's task lists and judging, on the real datasets (no model)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import tasks  # noqa: E402


def test_the_full_task_lists(shared_data_dir: Path) -> None:
    every = tasks.task_list(shared_data_dir, None, ["graphqlrestbench", "tmdb", "spotify"])
    counts = Counter(t.dataset for t in every)
    # 155 GraphQL-RestBench samples less the few-shot examples, all 157 RestBench queries
    assert counts == {"graphqlrestbench": 151, "tmdb": 100, "spotify": 57}
    rows = tasks._gql_rows(shared_data_dir)
    shots = tasks.few_shot(rows, tasks.GqlDomains(rows))
    assert len(shots) == 4 and all(s["_id"].startswith("train-") for s in shots)
    assert not {f"gql-{s['_id']}" for s in shots} & {t.id for t in every}
    # a prefix is the same tasks in every run (seeded), per dataset
    prefix = tasks.task_list(shared_data_dir, 3, ["tmdb", "spotify"])
    assert [t.id for t in prefix] == [t.id for t in every if t.dataset == "tmdb"][:3] + [
        t.id for t in every if t.dataset == "spotify"
    ][:3]


def test_correct_path_is_a_subsequence_of_the_calls_made() -> None:
    gold = [tasks._path("GET /search/movie"), tasks._path("GET  /movie/{movie_id}/credits ")]
    assert gold == ["GET /search/movie", "GET /movie/{movie_id}/credits"]
    made = ["GET /search/movie", "GET /movie/{movie_id}", "GET /movie/{movie_id}/credits"]
    assert tasks._subsequence(gold, made)
    assert not tasks._subsequence(gold, list(reversed(made)))
    assert not tasks._subsequence(gold, made[:1])
