"""Rules a description states and its schema does not (autofeedback/serve/_doc_rules.py).

The cases (tests/data/doc_rules/cases.json) are descriptions as real specs write them:
API-Bank's strftime layouts, Spotify's counts, TMDB's "Must be uppercase", and the
sentences that state no rule (a standard's name, a default) and must stay silent.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from autofeedback.core._model import Operation, Parameter
from autofeedback.serve._doc_rules import broken_rules, param_rules, request_values
from benchmarks import _datasets

CASES = json.loads(
    (Path(__file__).parents[1] / "data" / "doc_rules" / "cases.json").read_text(encoding="utf-8")
)
NOW = dt.datetime(2026, 1, 1)


@pytest.mark.parametrize("case", CASES, ids=[c["why"] for c in CASES])
def test_a_description_states_its_rule(case: dict[str, Any]) -> None:
    param = Parameter("p", "query", case["schema"], description=case["description"])
    rules = param_rules(param)
    assert [r.kind for r in rules] == case["kinds"]
    if "shape" in case:
        assert rules[0].shape == case["shape"]
    for value in case["good"]:
        assert not list(broken_rules(rules, {("query", "p"): value}, now=NOW)), value
    for value in case["bad"]:
        broken = list(broken_rules(rules, {("query", "p"): value}, now=NOW))
        assert [v for _, v in broken] == [value]
        # the rule says why in the docs' own words
        assert broken[0][0].says in case["description"]


def test_one_value_breaks_one_rule_at_a_time() -> None:
    """A date in the wrong layout is not also "not in the future": the first rule."""
    day = Parameter(
        "day", "body", {"type": "string"}, description="Format: YYYY-MM-DD. Must be in the future."
    )
    broken = list(broken_rules(param_rules(day), {("body", "day"): "May 1st"}, now=NOW))
    assert [r.kind for r, _ in broken] == ["format"]


def test_values_are_read_where_each_parameter_travels() -> None:
    op = Operation(
        "x",
        method="POST",
        path="/x/{id}",
        parameters=(
            Parameter("id", "path"),
            Parameter("q", "query"),
            Parameter("X-Day", "header"),
            Parameter("day", "body"),
        ),
    )
    values = request_values(
        op, path={"id": "1"}, query={"q": "a"}, headers={"x-day": "b"}, body={"day": "c"}
    )
    assert values == {
        ("path", "id"): "1",
        ("query", "q"): "a",
        ("header", "X-Day"): "b",
        ("body", "day"): "c",
    }


def test_no_gold_call_of_the_shared_datasets_breaks_a_rule() -> None:
    """The rules are the docs' own: every gold call keeps them (a rule that refused a
    gold call would be one the reader made up)."""
    if _datasets.shared_data_dir() is None:
        pytest.skip("shared data (../shared/data) not found")
    from autofeedback import ApiCatalog
    from autofeedback.serve._doc_rules import operation_rules

    checked = 0
    for dataset in ("api-bank", "toolalpaca"):
        catalogs: dict[str, ApiCatalog] = {}
        for task in _datasets.load_dataset(dataset):
            if task.spec_key not in catalogs:
                catalogs[task.spec_key] = ApiCatalog.from_obj(task.spec, source=dataset)
            for name, args in task.calls:
                op = catalogs[task.spec_key].get(name)
                if op is None:
                    continue
                rules = operation_rules(op)
                checked += bool(rules)
                assert not list(broken_rules(rules, request_values(op, body=args))), (task.id, name)
    assert checked > 100  # API-Bank's layouts were read
