"""GraphQL-RestBench's four metrics: gold against gold is 1.0, each kind of mistake costs
the metrics that should see it and no other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autofeedback.flow._metrics import argument_differences, score_program, score_programs

GOLD = (
    'r = GET_search_movie(query="Titanic")\n'
    "r1 = GET_movie__movie_id__credits(movie_id=r.results[0].id)\n"
    'r2 = GET_search_person(query="Cameron")\n'
    "GET_person__person_id_(person_id=r2.results[0].id)\n"
)


def test_renamed_variables_and_reordered_keywords_still_match() -> None:
    pred = GOLD.replace("r1", "credits").replace("r2", "p").replace("r.", "movies.")
    pred = pred.replace("r = ", "movies = ")
    assert set(score_program(pred, GOLD).as_dict().values()) == {1.0}
    assert score_program("F(b=2, a='x')", 'F(a="x", b=2)').arg_match_full == 1.0


def test_wrong_argument_costs_arg_match_only() -> None:
    pred = GOLD.replace('"Cameron"', '"James Cameron"')
    s = score_program(pred, GOLD)
    assert (s.arg_match_full, s.arg_match_per_function) == (0.0, 0.75)
    assert (s.seq_match_full, s.seq_match_connected) == (1.0, 1.0)


def test_wrong_reference_costs_arg_match() -> None:
    pred = GOLD.replace("person_id=r2.results[0].id", "person_id=r.results[0].id")
    assert score_program(pred, GOLD).arg_match_per_function == 0.75


def test_missing_chain_costs_connected_subsequences() -> None:
    pred = GOLD.split("r2 = ")[0]  # the person chain is left out
    s = score_program(pred, GOLD)
    assert s.seq_match_full == 0.0
    assert s.seq_match_connected == 0.5  # one of the two connected chains is there
    assert s.arg_match_per_function == 0.5


def test_unreadable_prediction_scores_zero() -> None:
    assert set(score_program("not a program (", GOLD).as_dict().values()) == {0.0}


def test_empty_input_is_misuse() -> None:
    with pytest.raises(ValueError):
        score_programs([])


def test_gold_against_gold_is_one_on_every_sample(shared_data_dir: Path) -> None:
    rows = [
        json.loads(line)
        for name in ("train", "valid", "test")
        for line in (shared_data_dir / "graphqlrestbench" / f"{name}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    scores = score_programs((r["output"], r["output"]) for r in rows)
    assert scores.samples == 155
    assert set(scores.as_dict().values()) == {1.0}
    # and a prediction that drops the last call of every program is scored below 1
    cut = score_programs(
        ("\n".join(r["output"].strip().splitlines()[:-1]), r["output"]) for r in rows
    )
    # (one gold program's last line does not parse: dropping it changes nothing)
    assert cut.seq_match_full == pytest.approx(1 / 155)


def test_intermediate_value_and_loop_match_the_inline_gold() -> None:
    gold = 'r = S(query="Dune")\nD(movie_id=r.results[0].id)'
    inline = score_program(
        'res = S(query="Dune")\nmid = res.results[0].id\nprint(mid)\nD(movie_id=mid)', gold
    )
    assert inline.as_dict() == {k: 1.0 for k in inline.as_dict()}
    looped = score_program(
        'r = S(query="Dune")\nfor m in r.results[:1]:\n    D(movie_id=m.id)', gold
    )
    assert looped.seq_match_full == 1.0 and looped.seq_match_connected == 1.0
    assert looped.arg_match_full == 0.0  # m.id is not r.results[0].id


def test_a_call_read_from_at_once_is_a_call() -> None:
    gold = 'r = S(query="Dune")\nD(movie_id=r.results[0].id)'
    program = (
        'r = S(query="Dune")\n'
        "r = D(movie_id=r.results[0].id)\n"
        "r = D(movie_id=r.results[0].id).genres\n"  # a third call, read from at once
    )
    extra = score_program(program, gold)
    assert extra.seq_match_full == 0.0 and extra.arg_match_full == 0.0


def test_argument_differences_say_why_a_call_of_a_gold_function_misses() -> None:
    pred = (
        "r = GET_search_movie(query='Titanic', page=1, include_adult=False)\n"
        "r1 = GET_movie__movie_id__credits(movie_id=550)\n"
        "r2 = GET_search_person()\n"
        "GET_person__person_id_(person_id=r2.results[0].id)\n"
    )
    found = [(d.kind, d.function, d.argument) for d in argument_differences(pred, GOLD)]
    assert found == [
        ("extra", "GET_search_movie", "include_adult"),
        ("extra", "GET_search_movie", "page"),
        ("value", "GET_movie__movie_id__credits", "movie_id"),
        ("missing", "GET_search_person", "query"),
    ]
    assert argument_differences(GOLD, GOLD) == []
    # a function gold does not call, or an unreadable program: nothing to compare
    assert argument_differences("GET_tv(x=1)", GOLD) == []
    assert argument_differences("((((", GOLD) == []
