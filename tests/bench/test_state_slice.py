"""benchmarks/loop.py's state slice (issue 38), without a model: the task set builds,
each task's seeded state makes the sandbox refuse the naive call with the code the spec
documents (and lets a control's through), and each task's check accepts the gold path
and rejects the naive one. The last test runs the real loop runner with a scripted
model (the LLM is outside the product)."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autofeedback import ApiCatalog  # noqa: E402
from autofeedback.sandbox import Sandbox  # noqa: E402
from benchmarks import _state_tasks as st  # noqa: E402

TASKS = st.state_tasks()


@pytest.fixture(scope="module")
def catalog() -> ApiCatalog:
    return st.catalog()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def sandbox(catalog: ApiCatalog) -> Iterator[Sandbox]:
    with Sandbox(catalog, terse=True) as sb:
        yield sb


def _send(
    sandbox: Sandbox, catalog: ApiCatalog, call: tuple[str, str, dict[str, Any] | None]
) -> tuple[requests.Response, st.Made]:
    """Send one HTTP call and read it back the way the judge reads a loop's attempt."""
    method, path, body = call
    answer = requests.request(method, sandbox.url + path, json=body, timeout=10)
    made = st.made_from_http(catalog, method, sandbox.url + path, body, answer.status_code)
    assert made is not None, call
    return answer, made


def test_the_slice_builds() -> None:
    assert len(TASKS) == 28 and len({t.id for t in TASKS}) == 28
    kinds = Counter(t.kind for t in TASKS)
    assert {k: kinds[k] for k in st.STATE_KINDS} == dict.fromkeys(st.STATE_KINDS, 5)
    assert {k: kinds[k] for k in st.CONTROL_KINDS} == dict.fromkeys(st.CONTROL_KINDS, 2)
    # any prefix of four holds every state kind; the same tasks on every build
    assert [t.kind for t in st.state_tasks(4)] == list(st.STATE_KINDS)
    assert [t.template for t in st.state_tasks()] == [t.template for t in TASKS]
    for t in TASKS:
        assert t.control == (t.code is None)
        # only ids the seeding returns are left to fill in
        assert set(re.findall(r"\{(\w+)\}", t.template)) <= {"venue", "booking"}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_seeded_state_refuses_the_naive_call_with_the_documented_code(
    task: st.StateTask, sandbox: Sandbox, catalog: ApiCatalog
) -> None:
    sandbox.reset()
    refs = st.seed(sandbox.url, task)
    sandbox.reset()
    # the same calls make the same ids: every setting reads the same request
    assert st.seed(sandbox.url, task) == refs
    answer, made = _send(sandbox, catalog, task.naive(refs))
    if task.control:
        assert answer.ok, (task.id, answer.status_code)
        assert st.judge(task, refs, [made], sandbox.url), task.id
        # nothing done is no success
        sandbox.reset()
        refs = st.seed(sandbox.url, task)
        assert not st.judge(task, refs, [], sandbox.url)
    else:
        assert answer.json() == {"info_code": task.code}, task.id
        assert answer.status_code == (429 if task.kind == "quota" else 409)
        # the naive call alone (what Base does) is no success
        assert not st.judge(task, refs, [made], sandbox.url), task.id


@pytest.mark.parametrize("task", [t for t in TASKS if not t.control], ids=lambda t: t.id)
def test_each_check_accepts_the_gold_path_and_rejects_the_naive_one(
    task: st.StateTask, sandbox: Sandbox, catalog: ApiCatalog
) -> None:
    sandbox.reset()
    refs = st.seed(sandbox.url, task)
    _, naive = _send(sandbox, catalog, task.naive(refs))
    made = [naive]
    for call in task.gold(refs):
        answer, step = _send(sandbox, catalog, call)
        assert answer.ok, (task.id, call, answer.status_code)
        made.append(step)
    assert st.judge(task, refs, made, sandbox.url), task.id
    # the naive call made again after the refusal: a write, no success
    again = [naive, naive]
    assert not st.judge(task, refs, again, sandbox.url), task.id


def test_an_answer_with_no_call_after_the_refusal_is_a_success_where_nothing_is_left() -> None:
    task = next(t for t in TASKS if t.kind == "quota")
    refused = st.Made("createVenue", {"name": "Main Hall"}, True, 429)
    assert st.judge(task, {}, [refused, st.Made("", {}, False, None)], "http://unused")
    # another name tried instead: the quota holds for every name
    other = st.Made("createVenue", {"name": "Main Hall 2"}, True, 429)
    assert not st.judge(task, {}, [refused, other], "http://unused")


def test_a_sent_attempt_is_read_as_the_call_that_went_out(catalog: ApiCatalog) -> None:
    from autofeedback.core._model import ApiRequest

    # the model wrote CreateVenue; with the certain repairs on, POST /venues went out
    written = ApiRequest(name="CreateVenue", arguments={"name": "Main Hall"})
    sent = {"method": "POST", "url": "http://127.0.0.1:1/venues", "json": {"name": "Main Hall"}}
    attempts = [
        SimpleNamespace(request=written, sent=sent, status=201),
        SimpleNamespace(request=written, sent=None, status=None),  # held back, not sent
    ]
    assert st.made_calls(attempts, catalog) == [
        st.Made("createVenue", {"name": "Main Hall"}, True, 201),
        st.Made("CreateVenue", {"name": "Main Hall"}, False, None),
    ]


class Scripted:
    """The model, replaced: each conversation's answers in turn (the LLM is outside
    the product)."""

    def __init__(self, answers: Mapping[str, Sequence[str]]) -> None:
        self.answers = answers
        self.last_usage = None

    def complete(self, messages: Sequence[Mapping[str, str]], **options: Any) -> str:
        [script] = [a for key, a in self.answers.items() if key in messages[1]["content"]]
        turn = sum(m["role"] == "assistant" for m in messages)
        return script[min(turn, len(script) - 1)]


def test_the_runner_judges_a_scripted_run_per_setting(tmp_path: Path) -> None:
    from benchmarks import loop

    task = next(t for t in TASKS if t.kind == "duplicate")
    name, city = task.want["name"], task.want["city"]
    script = {
        st.instruction(task, {}): [
            f"<API>createVenue(name='{name}', city='{city}')</API>",
            f"<API>createVenue(name='{name} 2', city='{city}')</API>",
        ]
    }
    shared = loop.SharedLLM(Scripted(script), name="scripted")
    runner = loop.Runner(shared, loop.SLICE_SETTINGS)
    try:
        out = runner.run_state_task(task, loop.SLICE_SETTINGS)
    finally:
        runner.close()
    # Base and Static stop at the refusal; the dynamic feedback gets the second name made
    assert {s: o.correct for s, o in out.items()} == {
        "Base": False,
        "Static": False,
        "Dynamic": True,
        "Static & Dynamic": True,
    }
    assert out["Dynamic"].refused == 1 and out["Dynamic"].stop == "success"
    assert "-> 409; createVenue" in out["Dynamic"].final
    table = st.state_table(
        {task.id: out}, loop.SLICE_SETTINGS, [task], type("A", (), {"llm": "x", "model": None})()
    )
    assert "| Dynamic | 1/1 = 1.000" in table and "| duplicate | 0/1 | 0/1 | 1/1 | 1/1 |" in table
