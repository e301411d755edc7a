"""The records the benchmarks share, built in one place from ``../shared/data``.

What is read from the shared data lives in ``_datasets.py`` (the loaders: tasks, gold
calls, specs); the mutations in ``_mutations.py``; valid requests from a raw spec in
``_valid_requests.py``; the repair corpora in ``_repair_corpora.py``. This module builds
from them the records that more than one benchmark reads, so that each benchmark imports
its records from here and no benchmark script imports another for them:

* :func:`build`, :class:`Record`, :func:`instruction`: ``detection.py``'s records (gold,
  garbled and mutated calls as model text, with the user's instruction);
* :func:`detection_lines`, :func:`bfcl_mutated_lines`, :func:`gold_lines`: audit records
  (JSON lines) of ``same_verdicts.py``, ``speed.py --only-goals`` and ``--only-startup``;
* :func:`composed_spec`, :func:`http_records`, :func:`mistaken`, :func:`http_lines`: the
  composed 2,034-operation spec and its valid and mistaken HTTP records (``speed.py``,
  ``same_verdicts.py``, ``speed.py --only-goals``);
* :func:`after_last_call`: the part of an API-Bank dialogue a gold call answers.

Every builder draws from fixed seeds: the same data gives the same records, byte for
byte (``same_verdicts.py`` relies on it).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autofeedback import ApiCatalog
from benchmarks import _datasets
from benchmarks._mutations import MUTATORS, Call, garble, render

if TYPE_CHECKING:
    from benchmarks._valid_requests import RawSpec

WORK = Path(__file__).resolve().parent / ".work"

#: the datasets of ``detection.py`` (and of the ``detection`` corpus of ``same_verdicts.py``)
DETECTION_DATASETS = ["api-bank", "bfcl-simple", "bfcl-multiple", "bfcl-parallel", "toolalpaca"]


# -- model outputs made from gold calls ----------------------------------------------------


def after_last_call(dialogue: str) -> str:
    """The part of an API-Bank dialogue after its last ``API-Request:`` line."""
    at = dialogue.rfind("API-Request:")
    if at < 0:
        return dialogue
    end = dialogue.find("\n", at)
    return dialogue[end + 1 :] if end >= 0 else dialogue


def instruction(task: _datasets.Task) -> str:
    """What the user asks for. An API-Bank dialogue replays the calls already made; the
    gold call answers the part after the last of them (see :func:`after_last_call`)."""
    return after_last_call(task.instruction) if task.dataset == "api-bank" else task.instruction


@dataclass
class Record:
    """One record of ``detection.py``: a model output made from a task's gold calls."""

    dataset: str
    task: _datasets.Task
    subtype: str  # "clean" or a code
    text: str
    calls: list[Call] | None  # None when the output is garbled


def build(tasks: list[_datasets.Task], catalogs: dict[str, ApiCatalog]) -> list[Record]:
    """``detection.py``'s records of ``tasks``: each gold call unchanged ("clean"), garbled
    (E1) and mutated into every subtype ``_mutations.py`` makes of it, one seed per task."""
    out: list[Record] = []
    for i, task in enumerate(tasks):
        if not task.calls:
            continue
        catalog = catalogs[task.spec_key]
        gold = [(n, dict(a)) for n, a in task.calls]
        out.append(Record(task.dataset, task, "clean", render(gold), gold))
        rng = random.Random(f"{task.dataset}/{task.id}")
        out.append(Record(task.dataset, task, "E1", garble(render(gold), rng, i), None))
        op = catalog.get(gold[0][0])
        if op is None:
            continue
        for code, mutate in MUTATORS.items():
            mutated = mutate(gold[0], op, catalog, rng)
            if mutated is not None:
                calls = [mutated, *gold[1:]]
                out.append(Record(task.dataset, task, code, render(calls), calls))
    return out


# -- audit records (JSON lines) ---------------------------------------------------------


def gold_lines() -> list[str]:
    """The gold single calls of BFCL simple and multiple as ``{"id", "tools", "call"}``
    records (the tool lists as BFCL gives them)."""
    lines = []
    for name in ("bfcl-simple", "bfcl-multiple"):
        for task in _datasets.load_dataset(name):
            if not task.calls:
                continue
            call_name, arguments = task.calls[0]
            call = {"name": call_name, "arguments": dict(arguments)}
            lines.append(json.dumps({"id": task.id, "tools": task.spec, "call": call}))
    return lines


def bfcl_mutated_lines() -> list[str]:
    """The mutated single calls of BFCL simple and multiple, one JSON record per line:
    ``{"id", "tools", "call"}`` (the same mutations, from the same seeds, as
    ``detection.py``)."""
    lines = []
    for name in ("bfcl-simple", "bfcl-multiple"):
        tasks = _datasets.load_dataset(name)
        catalogs: dict[str, ApiCatalog] = {}
        for i, task in enumerate(tasks):
            if not task.calls:
                continue
            catalog = catalogs.get(task.spec_key)
            if catalog is None:
                catalog = catalogs[task.spec_key] = ApiCatalog.from_obj(task.spec, source=name)
            gold = [(n, dict(a)) for n, a in task.calls]
            rng = random.Random(f"{task.dataset}/{task.id}")
            garble(render(gold), rng, i)  # the E1 record's draw: the same stream as detection.py
            op = catalog.get(gold[0][0])
            if op is None:
                continue
            for code, mutate in MUTATORS.items():
                mutated = mutate(gold[0], op, catalog, rng)
                if mutated is not None:
                    call = {"name": mutated[0], "arguments": mutated[1]}
                    record = {"id": f"{task.id}/{code}", "tools": task.spec, "call": call}
                    lines.append(json.dumps(record))
    return lines


def detection_lines() -> list[str]:
    """Every record of ``detection.py`` as an audit record with its tools and instruction."""
    lines = []
    for name in DETECTION_DATASETS:
        tasks = _datasets.load_dataset(name)
        catalogs: dict[str, ApiCatalog] = {}
        for t in tasks:
            if t.spec_key not in catalogs:
                catalogs[t.spec_key] = ApiCatalog.from_obj(t.spec, source=name)
        for k, rec in enumerate(build(tasks, catalogs)):
            record = {
                "id": f"{name}/{rec.task.id}/{rec.subtype}/{k}",
                "tools": rec.task.spec,
                "instruction": instruction(rec.task),
                "output": rec.text,
            }
            lines.append(json.dumps(record, default=str))
    return lines


# -- the composed 2,034-operation spec and its HTTP records ---------------------------------


def _rename_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/components/"):
                parts = v.split("/")
                parts[3] = prefix + parts[3]
                out[k] = "/".join(parts)
            else:
                out[k] = _rename_refs(v, prefix)
        return out
    if isinstance(node, list):
        return [_rename_refs(v, prefix) for v in node]
    return node


def composed_spec(data: Path, copies: int = 3) -> dict[str, Any]:
    """Box, OpenAI, TMDB and Spotify in one OpenAPI 3.0 document, ``copies`` times (the
    2,034-operation spec of ``speed.py``, ``same_verdicts.py`` and ``--only-goals``)."""
    from benchmarks._valid_requests import RawSpec

    sources = {
        "box": data / "specs" / "box.json",
        "oai": data / "specs" / "openai.yaml",
        "tmdb": data / "restbench" / "tmdb_oas.json",
        "spot": data / "restbench" / "spotify_oas.json",
    }
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "composed from real specs", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {},
        "components": {},
    }
    for tag, path in sources.items():
        raw = RawSpec.from_file(path).doc
        raw = _rename_refs(raw, f"{tag}_")
        for section, items in (raw.get("components") or {}).items():
            target = doc["components"].setdefault(section, {})
            for name, value in items.items():
                target[f"{tag}_{name}"] = value
        security = raw.get("security")
        for i in range(copies):
            prefix = f"/{'abc'[i]}/{tag}"
            for key, item in raw["paths"].items():
                item = dict(item)
                for method, op in list(item.items()):
                    if isinstance(op, dict) and "operationId" in op:
                        op = {**op, "operationId": f"{'abc'[i]}_{tag}_{op['operationId']}"}
                        if security is not None and "security" not in op:
                            op["security"] = security
                        item[method] = op
                doc["paths"][prefix + (key if key.startswith("/") else "/" + key)] = item
    return doc


def http_records(raw: RawSpec, per_op: int) -> Iterator[dict[str, Any]]:
    """Up to ``per_op`` valid HTTP records per operation of ``raw``, from a fixed seed."""
    from benchmarks._valid_requests import generate

    rng = random.Random(11)
    for op in raw.operations:
        for _ in range(per_op):
            made = generate(raw, op, rng, optional=0.3)
            if made.request is not None:
                yield made.request.record()


def mistaken(record: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """``record`` sent to an endpoint the spec does not have: one literal path segment
    misspelled (``/files/`` -> ``/filse/``), or an extra segment appended."""
    url = str(record["url"])
    head, _, query = url.partition("?")
    scheme, _, rest = head.partition("://")
    host, _, path = rest.partition("/")
    parts = path.split("/")
    literal = [i for i, p in enumerate(parts) if p.isalpha() and len(p) > 3 and i > 1]
    if literal and rng.random() < 0.7:
        i = rng.choice(literal)
        word = parts[i]
        k = rng.randrange(len(word) - 1)
        parts[i] = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    else:
        parts.append(rng.choice(["details", "all", "summary", "export"]))
    new = f"{scheme}://{host}/{'/'.join(parts)}" + (f"?{query}" if query else "")
    return {**record, "url": new}


def http_lines(data: Path) -> tuple[Path, list[str]]:
    """Valid and mistaken HTTP records on the composed spec (:func:`composed_spec`, written
    to ``benchmarks/.work/composed_2034.json``): the spec's path and the JSON lines."""
    from benchmarks._valid_requests import RawSpec

    WORK.mkdir(parents=True, exist_ok=True)
    spec = WORK / "composed_2034.json"
    doc = composed_spec(data)
    spec.write_text(json.dumps(doc, default=str))
    raw = RawSpec.from_openapi(doc, spec.name)
    valid = list(http_records(raw, 1))
    rng = random.Random(18)
    wrong = [m for m in (mistaken(r, rng) for r in valid[:600]) if m is not None]
    records = [{"id": f"v{i}", "request": r} for i, r in enumerate(valid)]
    records += [{"id": f"m{i}", "request": r} for i, r in enumerate(wrong)]
    return spec, [json.dumps(r, default=str) for r in records]
