"""benchmarks/loop.py's dynamic slice (issue 38), built from the real datasets (no
model): every task's gold call meets a rule only the server enforces, and the sandbox
accepts that gold call as it is."""

from __future__ import annotations

import sys
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autofeedback import ApiCatalog  # noqa: E402
from autofeedback.sandbox import Sandbox  # noqa: E402
from benchmarks import loop  # noqa: E402


def test_the_slice_is_the_tasks_where_only_the_server_refuses(shared_data_dir: Path) -> None:
    every = loop.dynamic_slice(1000)
    assert len(every) == 167 and {t.dataset for t in every} == {"api-bank"}
    # a prefix is the same tasks in every run (seeded)
    assert [t.id for t in loop.dynamic_slice(5)] == [t.id for t in every[:5]]
    catalogs: dict[str, ApiCatalog] = {}
    for task in every[:40]:
        if task.spec_key not in catalogs:
            catalogs[task.spec_key] = ApiCatalog.from_obj(task.spec, source=task.dataset)
        assert loop.server_rules(task, catalogs[task.spec_key]), task.id
    # the gold calls keep the rules: the terse sandbox answers each with a 2xx
    task = every[0]
    name, args = task.calls[0]
    with Sandbox(catalogs[task.spec_key], terse=True) as sandbox:
        assert requests.post(f"{sandbox.url}/{name}", json=args, timeout=10).ok
        broken = {**args, **{k: "tomorrow" for k in args if "time" in k or "date" in k}}
        refused = requests.post(f"{sandbox.url}/{name}", json=broken, timeout=10)
    assert (refused.status_code, refused.json()) == (400, {"info_code": 40004})
