"""benchmarks/repair_harm.py's case builder and scoring (not its figures): the cases are
the calls the issue names, each a call the docs say is wrong (or, for a spec read wrong,
right), rendered alike for every entry point; BFCL answers are scored as BFCL's checker
would."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # benchmarks/ is a folder of scripts, not an installed package
    sys.path.insert(0, str(ROOT))

from autofeedback import ApiCatalog, Scanner, SpecWarning  # noqa: E402
from benchmarks import _harm_cases as hc  # noqa: E402
from benchmarks import _harm_natural as hn  # noqa: E402
from benchmarks import repair_harm  # noqa: E402

CASES = hc.all_cases()


def test_every_row_of_the_issue_and_200_generated_cases() -> None:
    ids = {c.id for c in CASES}
    assert len(ids) == len(CASES)
    for row in (
        "get_config->set_config",
        "getUser->setUser",
        "deleteUser({})->deleteUsers",
        "remove_item->remove_items",
        "count_volume->mount_volume",
        "wipeCache()->purgeAllData",
        "resetData()->purgeAllData",
        "removeEvent->deleteEvent",
        "delete_records where dropped",
        "DELETE /users dry_run dropped",
        "list_events limit->maxResults",
        "list_invoices tenant_id dropped",
        "share_doc private->public",
        "search_products max_price->min_price",
        "send_money sender->recipient",
        "cvv '0123'->123",
        "'1e-400'->0.0",
        "fullwidth '１２３'->123",
        "duplicate keys {a:1,a:2}",
        "placeOrder() inserted",
        "deleteAllJobs() inserted",
        "resetAllDevices() inserted",
        "rotateApiKey() inserted",
        "securitySchemes 'sig' key kept",
        "$ref-file spec: correct call",
        "measure->unit (enum)",
        "subtract->multiply (sub listed)",
        "location->where_to (wrong API)",
        "genre dropped",
    ):
        assert row in ids, row
    generated = hc.generated_cases()
    assert len(generated) >= 200 and all(c.kind == "harm" for c in generated)
    assert {c.family for c in generated} >= {
        "effect pairs",
        "one letter, another word",
        "opposites",
        "scope and safety flags",
        "lossy values",
    }
    controls = [c for c in CASES if c.kind == "control"]
    assert len(controls) >= 30 and all(c.expect == "repair" and c.repaired for c in controls)


@pytest.mark.parametrize("case", [c for c in CASES if c.spec is None], ids=lambda c: c.id)
def test_each_call_breaks_the_docs_and_each_control_has_one_documented_fix(case: hc.Case) -> None:
    with warnings.catch_warnings():  # a look-alike tool name is set aside, with a warning
        warnings.simplefilter("ignore", SpecWarning)
        catalog = ApiCatalog.from_tools(case.openai_tools())
    findings = Scanner(catalog, retriever=None).iter_findings(
        {"name": case.call[0], "arguments": case.call[1]}, instruction=case.instruction
    )
    if not case.sequence:  # a made-up id is only wrong against the data flow
        assert any(f.severity == "error" for f in findings), case.id
    if case.repaired is not None:
        name, args = case.repaired
        op = catalog.get(name)
        assert op is not None and set(args) <= {p.name for p in op.parameters}
        fixed = Scanner(catalog, retriever=None).iter_findings({"name": name, "arguments": args})
        assert not [f for f in fixed if f.severity == "error"], case.id


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.spec is not None or c.sequence], ids=lambda c: c.id
)
def test_the_http_rendering_loads_and_places_the_call(case: hc.Case, tmp_path: Path) -> None:
    spec = repair_harm.write_spec(case, "http://127.0.0.1:9/c/0", tmp_path)
    with warnings.catch_warnings():  # how well the loader reads it is the benchmark's question
        warnings.simplefilter("ignore", SpecWarning)
        catalog = ApiCatalog.from_file(str(spec))
    assert catalog.operations
    request = hc.http_call(case)
    assert request is not None and request["path"].startswith("/")


def test_rendering_puts_scalar_reads_in_the_query_and_writes_in_the_body() -> None:
    case = next(c for c in CASES if c.id == "list_invoices tenant_id dropped")
    doc = hc.openapi_for(case, "http://127.0.0.1:9")
    op = doc["paths"]["/list_invoices"]["get"]
    assert [p["name"] for p in op["parameters"]] == ["status"]
    assert hc.http_call(case) == {
        "method": "GET",
        "path": "/list_invoices",
        "query": {"status": "open", "tenant_id": "t-42"},
        "body": None,
    }
    cvv = next(c for c in CASES if c.id == "cvv '0123'->123")
    assert hc.http_call(cvv)["body"]["cvv"] == "0123"  # type: ignore[index]
    assert hc.method_of("purgeAllData") == "DELETE" and hc.method_of("getUser") == "GET"
    assert hc.method_of("sync", {"destructiveHint": True}) == "DELETE"


def test_outcomes_tell_harm_from_withheld_and_kept() -> None:
    harm = next(c for c in CASES if c.id == "get_config->set_config")
    assert repair_harm.classify_call(harm, None) == "withheld"
    assert repair_harm.classify_call(harm, ("get_config", {"key": "theme"})) == "as written"
    assert repair_harm.classify_call(harm, ("set_config", {"key": "theme"})) == "harmful"
    control = next(c for c in CASES if c.id == "measure->unit (enum)")
    assert (
        repair_harm.classify_call(
            control, ("get_weather", {"location": "Boston", "unit": "fahrenheit"})
        )
        == "kept"
    )
    assert repair_harm.classify_call(control, ("get_weather", {"location": "Boston"})) == "harmful"
    # 1 and 1.0 and "1" are three values
    value = next(c for c in CASES if c.id == "value '3' for integer")
    assert (
        repair_harm.classify_call(value, ("configure", {"ref": "r-1", "value": 3.0})) == "harmful"
    )
    # an inserted call is harm even when the model's call went out too
    placed = next(c for c in CASES if c.id == "placeOrder() inserted")
    mine = hc.http_call(placed)
    assert mine is not None
    inserted = {"method": "POST", "path": "/placeOrder", "query": {}, "body": None}
    assert repair_harm.classify_http(placed, [mine]) == "as written"
    assert repair_harm.classify_http(placed, [inserted, mine]) == "harmful"


def test_bfcl_scoring_follows_the_possible_answers() -> None:
    gold = [{"calc_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]
    assert hn.task_distance([("calc_area", {"base": 10, "height": 5})], gold) == 0
    assert hn.task_distance([("calc_area", {"base": 10, "height": 5, "unit": "Units"})], gold) == 0
    assert (
        hn.task_distance([("calc_area", {"base": 10.0, "height": 5})], gold) == 1
    )  # a float for an int
    assert hn.task_distance([("calc_area", {"base": 10})], gold) == 1
    assert hn.task_distance([("calc_volume", {"base": 10, "height": 5})], gold) == 1
    assert hn.task_distance([], gold) == 3
    pair = [{"f": {"x": [1]}}, {"g": {"y": [2]}}]
    assert hn.task_distance([("g", {"y": 2}), ("f", {"x": 1})], pair) == 0  # any order
    assert hn.task_distance([("f", {"x": 1})], pair) == 2


def test_bfcl_tasks_interleave_the_categories(shared_data_dir: Path) -> None:
    tasks = hn.load_tasks()
    assert len(tasks) == 1000
    assert [t.category for t in tasks[:4]] == [
        "simple",
        "multiple",
        "parallel",
        "parallel-multiple",
    ]
    first = tasks[0]
    messages = hn.messages_for(first)
    assert (
        first.question in messages[1]["content"]
        and first.functions[0]["name"] in messages[0]["content"]
    )
    assert (
        hn.answer_key("1.5b", first) == hn.answer_key("1.5b", first) != hn.answer_key("0.5b", first)
    )
