"""benchmarks/_datasets.py: counts, gold-call conventions, and gold calls against the
catalogs their own specs load into (with the upstream data quirks listed explicitly)."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from autofeedback import ApiCatalog

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:  # benchmarks/ is a folder of scripts, not an installed package
    sys.path.insert(0, str(_REPO))

from benchmarks._datasets import (  # noqa: E402
    DATASETS,
    DataUnavailable,
    Task,
    bfcl_value,
    load_api_bank,
    load_bfcl,
    load_dataset,
    load_restbench,
    normalise_step,
    parse_api_bank_calls,
    shared_data_dir,
    toolalpaca_unparseable,
)

needs_data = pytest.mark.skipif(
    shared_data_dir() is None,
    reason="shared benchmark data not found (set AUTOFEEDBACK_SHARED_DATA)",
)


def _catalogs(tasks: list[Task]) -> dict[str, ApiCatalog]:
    out: dict[str, ApiCatalog] = {}
    for task in tasks:
        if task.spec_key not in out:
            out[task.spec_key] = ApiCatalog.from_obj(task.spec, source=task.id)
    return out


# -- locating the data ---------------------------------------------------------------------


def test_shared_data_dir_honours_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOFEEDBACK_SHARED_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    with pytest.raises(DataUnavailable, match="missing data file"):
        load_api_bank()  # an empty folder: a clear error, not a KeyError
    monkeypatch.setenv("AUTOFEEDBACK_SHARED_DATA", str(tmp_path / "absent"))
    assert shared_data_dir() is None
    with pytest.raises(DataUnavailable, match="AUTOFEEDBACK_SHARED_DATA"):
        load_restbench("tmdb")


@needs_data
def test_unknown_names_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="unknown BFCL category"):
        load_bfcl("live_simple")
    with pytest.raises(ValueError, match="unknown RestBench set"):
        load_restbench("github")


# -- counts -------------------------------------------------------------------------------

#: dataset -> (tasks, gold calls)
_COUNTS = {
    "api-bank": (399, 399),
    "bfcl-simple": (400, 400),
    "bfcl-multiple": (200, 200),
    "bfcl-parallel": (200, 540),
    "bfcl-parallel-multiple": (200, 607),
    "toolalpaca": (114, 143 - 4),  # 4 golden calls are not JSON (see below)
    "restbench-tmdb": (100, 100),
    "restbench-spotify": (57, 57),
}


@needs_data
@pytest.mark.parametrize("name", DATASETS)
@needs_data
def test_counts(name: str) -> None:
    tasks = load_dataset(name)
    assert (len(tasks), sum(len(t.calls) for t in tasks)) == _COUNTS[name]
    assert len({t.id for t in tasks}) == len(tasks)
    assert all(t.dataset == name and t.instruction.strip() for t in tasks)


@needs_data
def test_bfcl_category_spellings() -> None:
    assert len(load_bfcl("simple_python")) == 400
    assert len(load_bfcl("parallel_multiple")) == 200


@needs_data
@pytest.mark.parametrize("name", DATASETS)
@needs_data
def test_spec_key_is_equal_exactly_for_equal_specs(name: str) -> None:
    by_key: dict[str, object] = {}
    for task in load_dataset(name):
        if task.spec_key in by_key:
            assert by_key[task.spec_key] == task.spec
        by_key[task.spec_key] = task.spec
    distinct = {"restbench-tmdb": 1, "restbench-spotify": 1, "toolalpaca": 11}
    if name in distinct:
        assert len(by_key) == distinct[name]


# -- every gold call names an operation of its own spec -----------------------------------

#: Gold calls whose API is not in the task's spec: ToolAlpaca's AviationAPI
#: Documentation holds 5 of the API's operations; its golden answers use 6 more.
_MISSING_OPERATIONS = {
    "toolalpaca": Counter(
        {
            "preferred-routes_search_get": 1,
            "vatsim_pilots_get": 1,
            "vatsim_controllers_get": 1,
            "weather_metar_get": 2,
            "weather_taf_get": 1,
        }
    )
}


@needs_data
@pytest.mark.parametrize("name", DATASETS)
@needs_data
def test_gold_call_names_exist_in_their_catalog(name: str) -> None:
    tasks = load_dataset(name)
    catalogs = _catalogs(tasks)
    missing: Counter[str] = Counter()
    for task in tasks:
        for api, _ in task.calls:
            if api not in catalogs[task.spec_key]:
                missing[api] += 1
    assert missing == _MISSING_OPERATIONS.get(name, Counter())


#: Gold calls that pass an undocumented argument or leave out a required one
#: (upstream quirks, found by this test):
#: * API-Bank: 8 (Cancel)TimedSwitch calls send ``device_id`` where the doc says ``name``;
#: * BFCL simple_python_200: ``fuel_efficiency`` is required but its allowed values start
#:   with ``""`` (so the first-allowed rule leaves it out);
#: * BFCL parallel_multiple_26: ``bank.calculate_balance`` is given ``type``, which is a
#:   property of ``transactions[]`` items, not a parameter.
_ARGUMENT_QUIRKS = {
    "api-bank": Counter(
        {
            ("CancelTimedSwitch", "unknown device_id"): 5,
            ("CancelTimedSwitch", "missing name"): 5,
            ("TimedSwitch", "unknown device_id"): 3,
            ("TimedSwitch", "missing name"): 3,
        }
    ),
    "bfcl-simple": Counter({("calculate_emissions", "missing fuel_efficiency"): 1}),
    "bfcl-parallel-multiple": Counter({("bank.calculate_balance", "unknown type"): 1}),
}


@needs_data
@pytest.mark.parametrize("name", [n for n in DATASETS if not n.startswith("restbench")])
@needs_data
def test_gold_arguments_match_documented_parameters(name: str) -> None:
    tasks = load_dataset(name)
    catalogs = _catalogs(tasks)
    quirks: Counter[tuple[str, str]] = Counter()
    for task in tasks:
        for api, args in task.calls:
            op = catalogs[task.spec_key].get(api)
            if op is None:
                continue
            documented = {p.name for p in op.parameters}
            quirks.update((api, f"unknown {a}") for a in args if a not in documented)
            quirks.update(
                (api, f"missing {p.name}")
                for p in op.parameters
                if p.required and p.name not in args
            )
    assert quirks == _ARGUMENT_QUIRKS.get(name, Counter())


# -- gold-call conventions ----------------------------------------------------------------


@needs_data
def test_api_bank_first_task() -> None:
    task = load_api_bank()[0]
    assert task.id == "api-bank-0"
    assert task.instruction.startswith("User: Can you please modify my appointment")
    assert "Generate API Request" not in task.instruction
    assert [doc["name"] for doc in task.spec] == [
        "QueryHealthData",
        "CancelRegistration",
        "ModifyRegistration",
    ]
    assert task.calls == (
        (
            "ModifyRegistration",
            {
                "appointment_id": "34567890",
                "new_appointment_date": "2023-03-26",
                "new_appointment_doctor": "Dr. Lee",
            },
        ),
    )


@needs_data
def test_api_bank_parser_handles_quoted_list_literals() -> None:
    text = (
        "API-Request: [AddMeeting(token='a1', meeting_topic='launch, phase=2', "
        "attendees='['John', 'Jane']')]"
    )
    assert parse_api_bank_calls(text) == (
        (
            "AddMeeting",
            {"token": "a1", "meeting_topic": "launch, phase=2", "attendees": ["John", "Jane"]},
        ),
    )
    assert parse_api_bank_calls("API-Request: [Calculator(formula='(1+2)*3')]") == (
        ("Calculator", {"formula": "(1+2)*3"}),
    )
    typed = [a for t in load_api_bank() for n, a in t.calls if n == "RecordHealthData"]
    assert typed and all(isinstance(a["health_data"], list) for a in typed)


@needs_data
def test_bfcl_allowed_value_rule() -> None:
    assert bfcl_value([10]) == (True, 10)
    assert bfcl_value(["units", ""]) == (True, "units")
    assert bfcl_value(["", 0]) == (False, None)
    assert bfcl_value([""]) == (False, None)
    assert bfcl_value([[3, 5]]) == (True, [3, 5])
    assert bfcl_value([{"min": [300000], "max": [400000, ""], "x": [""]}]) == (
        True,
        {"min": 300000, "max": 400000},
    )
    assert bfcl_value([[{"field": ["age"], "value": ["25", 25]}]]) == (
        True,
        [{"field": "age", "value": "25"}],
    )
    simple = load_bfcl("simple")
    assert simple[0].calls == (
        ("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"}),
    )
    assert simple[2].calls == (("math.hypot", {"x": 4, "y": 5}),)  # z: ["", 0] omitted
    assert simple[0].instruction == (
        "Find the area of a triangle with a base of 10 units and height of 5 units."
    )


@needs_data
def test_toolalpaca_calls_and_unparseable_inputs() -> None:
    tasks = load_dataset("toolalpaca")
    assert tasks[0].calls == (("PublicHolidayIsTodayPublicHoliday", {"countryCode": "CN"}),)
    dropped = toolalpaca_unparseable()
    assert [(t, a) for t, a, _ in dropped] == [
        ("toolalpaca-CurrencyBeacon-4", "latest_get"),
        ("toolalpaca-CurrencyBeacon-8", "latest_get"),
        ("toolalpaca-CurrencyBeacon-9", "latest_get"),
        ("toolalpaca-CurrencyBeacon-10", "latest_get"),
    ]
    assert all('"symbols": "symbols":' in raw for _, _, raw in dropped)
    # the dataset's own operation names were written in as operationIds
    weather = next(t for t in tasks if t.id.startswith("toolalpaca-apilayer weatherstack"))
    assert ApiCatalog.from_obj(weather.spec).names == ("current_get",)


@needs_data
def test_restbench_gold_paths_are_normalised_and_resolved() -> None:
    assert normalise_step(" GET  /movie/now_playing ") == ("GET", "/movie/now_playing")
    assert normalise_step("get /search/movie ") == ("GET", "/search/movie")
    root = shared_data_dir()
    assert root is not None
    for name in ("tmdb", "spotify"):
        tasks = load_restbench(name)
        raw = json.loads((root / "restbench" / f"{name}.json").read_text())
        catalog = ApiCatalog.from_obj(tasks[0].spec)
        for task, item in zip(tasks, raw, strict=True):
            ((api, args),) = task.calls
            op = catalog.get(api)
            assert op is not None and args == {}
            method, path = normalise_step(item["solution"][0])
            assert (op.method, _blank(op.path or "")) == (method, _blank(path))
    tmdb = load_restbench("tmdb")
    assert tmdb[26].calls == (("GET_movie-now_playing", {}),)  # gold: " GET /movie/now_playing"


def _blank(template: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", template)
