"""benchmarks/tasks.py's task lists and judging, on the real datasets (no model)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def test_restbench_failure_notes_sort_each_miss_by_how_far_it_went() -> None:
    gold = ["GET /search/person", "GET /person/{person_id}/movie_credits"]
    made = {
        "none": ([], "no-call"),
        "other": (["GET /movie/latest"], "answered"),
        "stopped": (["GET /search/person"], "answered"),
        "right": (gold, "answered"),
    }
    rb = [tasks.Task(f"tmdb-{k}", "tmdb", "q", gold, {}) for k in made]
    done = {
        f"tmdb-{k}": {
            "Feedback": tasks.Outcome(
                correct=calls == gold,
                stop=stop,
                turns=1,
                tokens=1,
                final="\n".join(calls),
                detail={"made": calls, "gold": gold},
                errors=["E5.3"] if k == "other" else [],
            )
        }
        for k, (calls, stop) in made.items()
    }
    (note,) = tasks.failure_notes(done, rb, ["Feedback"])
    assert note.startswith("- RestBench TMDB, Feedback: 3 of 4 miss the gold path. ")
    assert "1 make no call; 1 make calls but never gold's first; " in note
    assert "1 make gold's first calls, then miss the next (at step 2 1; stops: answered 1)" in note
    assert note.endswith("Codes of the findings left: E5.3 1.")


def test_graphql_failure_notes_say_which_arguments_differ() -> None:
    gold = 'r = S(query="Titanic")\nD(movie_id=r.results[0].id)'
    finals = {
        "extra": "r = S(query='Titanic', page=1)\nD(movie_id=r.results[0].id)",
        "value": "r = S(query='Avatar')\nD(movie_id=r.results[0].id)",
        "other": "T(x=1)",
    }
    gql = [tasks.Task(f"gql-{k}", "graphqlrestbench", "q", gold, {}) for k in finals]
    done = {f"gql-{k}": {"Grammar": _program_outcome(final, gold)} for k, final in finals.items()}
    (note,) = tasks.failure_notes(done, gql, ["Grammar"])
    assert "3 of 3 programs miss ArgFull; 1 of them call other functions" in note
    assert "2 call the gold functions with an argument that differs" in note
    assert "(programs with an argument gold does not send 1, most often page 1; " in note
    assert "with one left out 0; with another value 1)" in note
    assert note.endswith(
        "Not counting the arguments gold does not send (a diagnostic, not "
        "the paper's metric), ArgFull would be 0.333."
    )


def _program_outcome(final: str, gold: str) -> tasks.Outcome:
    from autofeedback.flow import score_program

    scores = score_program(final, gold)
    return tasks.Outcome(
        correct=scores.arg_match_full == 1.0,
        stop="clean",
        turns=1,
        tokens=1,
        final=final,
        detail=scores.as_dict(),
        errors=[],
    )


def test_the_react_table_counts_the_turns_asked_again() -> None:
    gold = ["GET /me"]

    def outcome(turns: int, asked_again: int | None) -> tasks.Outcome:
        return tasks.Outcome(
            correct=True,
            stop="answered",
            turns=turns,
            tokens=10,
            final="GET /me",
            detail={"made": gold, "gold": gold},
            errors=[],
            asked_again=asked_again,
        )

    rb = [tasks.Task(f"spotify-{i}", "spotify", "q", gold, {}) for i in range(2)]
    done = {
        "spotify-0": {"Feedback": outcome(3, 2), "Feedback + repair": outcome(2, 0)},
        "spotify-1": {"Feedback": outcome(2, 1), "Feedback + repair": outcome(4, 0)},
    }
    table = tasks.tabulate(done, rb, ["Feedback", "Feedback + repair"])
    assert "| model turns / task | asked again / task | tokens / task |" in table
    assert "| Feedback | 2/2 = 1.000 [0.34, 1.00] | +0.00 | 1.00 | 2.50 | 1.50 | 10 |" in table
    assert (
        "| Feedback + repair | 2/2 = 1.000 [0.34, 1.00] | +0.00 | 1.00 | 3.00 | 0.00 | 10 |"
        in table
    )
    # a checkpoint row written before the count was kept shows none, not zero
    done["spotify-1"]["Feedback"] = outcome(2, None)
    assert "| 2.50 | — | 10 |" in tasks.tabulate(done, rb, ["Feedback"])


def test_asked_again_counts_the_model_turns_fed_back() -> None:
    from types import SimpleNamespace as Turn

    turns = [
        Turn(output="Action: a()", feedback="fix it"),
        Turn(output="", feedback=None),  # a call autofeedback inserted: no model turn
        Turn(output="Action: a(x=1)", feedback=None),
        Turn(output="Final Answer: done", feedback="not yet"),
    ]
    assert tasks._asked_again(turns) == 2
