"""Path templates are untrusted like spec patterns: a segment with several variables
(``/v/{a}-{b}-{c}-{d}.json``) is matched in linear time, by ``scan`` and by the sandbox,
and binds its variables as before (issue 29, item 4)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requests

from autofeedback import ApiCatalog, Operation, Parameter, Response
from autofeedback.serve._sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]


def _catalog() -> ApiCatalog:
    params = tuple(Parameter(n, "path", {"type": "string"}, required=True) for n in "abcd")
    op = Operation(
        "getPart",
        method="GET",
        path="/v/{a}-{b}-{c}-{d}.json",
        parameters=params,
        responses=(Response("200", "ok", {"type": "object"}),),
    )
    return ApiCatalog([op], servers=("http://127.0.0.1:9",))


def test_several_variables_in_one_segment_bind_as_before() -> None:
    catalog = _catalog()
    [(op, params), *_] = [catalog.match_http("GET", "http://127.0.0.1:9/v/x-y-z-w-q.json")]
    assert op.name == "getPart"
    # greedy, leftmost: the first variables take what they can, as Python's re did
    assert params == {"a": "x-y", "b": "z", "c": "w", "d": "q"}
    with Sandbox(catalog) as sandbox:
        answer = requests.get(sandbox.url + "/v/x-y-z-w-q.json", timeout=10)
    assert answer.status_code == 200


def test_a_long_url_against_many_variables_returns_at_once() -> None:
    """With a backtracking regex this URL costs O(n^4) steps (hours; a 1.6 KB one took
    9 s against three variables). Run in a fresh interpreter: a regex holds the GIL, so
    only a process can be stopped if the path hangs."""
    code = f"""
        import requests
        from autofeedback import Scanner
        from autofeedback.core._model import ApiRequest
        from autofeedback.serve._sandbox import Sandbox
        import sys
        sys.path.insert(0, {str(ROOT / "tests" / "core")!r})
        from test_routing_linear import _catalog

        catalog = _catalog()
        url = "http://127.0.0.1:9/v/" + "-" * 3200 + "x"
        assert catalog.match_http("GET", url) is None
        found = list(Scanner(catalog, retriever=None).iter_findings(
            ApiRequest(method="GET", url=url)))
        assert found and found[0].code.startswith("E2"), found
        with Sandbox(catalog) as sandbox:
            answer = requests.get(sandbox.url + "/v/" + "-" * 3200 + "x", timeout=60)
            assert answer.status_code == 404, answer.status_code
        print("ok")
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a long URL stalled path matching for over 60 s")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_a_lone_surrogate_in_a_url_is_matched_and_kept() -> None:
    """RE2 reads UTF-8, which a lone surrogate is not (a model's URL may hold one): it
    is matched as U+FFFD and the path parameter keeps the text as sent."""
    hit = _catalog().match_http("GET", "http://127.0.0.1:9/v/a\udfff-b-c-d.json")
    assert hit is not None and hit[1]["a"] == "a\udfff"
