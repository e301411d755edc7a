"""Shared loaders for the public benchmark data in ``../shared/data`` (see its SOURCES.md).

Every loader returns a list of :class:`Task`: the user's request, the API docs it may use
(a document :meth:`autofeedback.ApiCatalog.from_obj` accepts) and the gold calls. Loads
are cached per data folder and tasks share their ``spec`` objects: treat them as
read-only. Instructions: API-Bank's dialogue ``input`` (without the trailing "Generate
API Request:"), BFCL's user messages joined by newlines, ToolAlpaca's instruction,
RestBench's query.

Gold-call conventions, per dataset:

* **API-Bank** -- ``expected_output`` (``API-Request: [Name(k='v', ...)]``) is parsed with
  :mod:`ast` (``literal_eval`` on each argument node; never ``eval``). 31 gold calls quote
  a list literal with the quote it contains (``attendees='['John', 'Jane']'``); those are
  split on ``, key=`` and the quoted literal becomes the list (the documented type).
  Task ids are ``api-bank-<position>`` (the upstream ``id`` restarts in every file).
* **BFCL** -- each parameter's list of allowed values becomes *one* value: the first
  allowed value, unless that first value is ``""`` (BFCL's "may be omitted" marker), in
  which case the parameter is left out (the canonical answer omits it). The same rule is
  applied inside dict values and lists of dicts, whose keys BFCL also maps to allowed
  value lists.
* **ToolAlpaca** -- ``(Action, json.loads(Action_Input))``. Four golden calls in
  CurrencyBeacon carry invalid JSON (``"symbols": "symbols": [...]``); they are dropped
  (see :func:`toolalpaca_unparseable`). Most ToolAlpaca docs have no ``operationId``; the
  dataset names operations through ``Function_Projection`` (name -> [path, method]), so
  those names are written into the task's (copied) spec as ``operationId``. Six golden
  calls of AviationAPI name operations its (truncated) Documentation lacks
  (``weather_metar_get``, ``vatsim_pilots_get``...); they are kept.
* **RestBench** -- only the first step of ``solution`` is kept, with empty arguments:
  ``"GET /path"`` with whitespace normalised, resolved against the spec's path templates
  (variable names ignored) to the operation's catalog name (its ``operationId``). A gold
  path that matches no template is kept as written.

Example::

    >>> tasks = load_bfcl("simple")  # doctest: +SKIP
    >>> tasks[0].calls
    (('calculate_triangle_area', {'base': 10, 'height': 5, 'unit': 'units'}),)
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "BFCL_CATEGORIES",
    "DATASETS",
    "DataUnavailable",
    "Task",
    "api_bank_doc_set",
    "api_bank_docs",
    "bfcl_value",
    "load_api_bank",
    "load_bfcl",
    "load_dataset",
    "load_restbench",
    "load_toolalpaca",
    "normalise_step",
    "parse_api_bank_calls",
    "shared_data_dir",
    "spec_key",
    "toolalpaca_docs",
    "toolalpaca_unparseable",
]

DATASETS = (
    "api-bank",
    "bfcl-simple",
    "bfcl-multiple",
    "bfcl-parallel",
    "bfcl-parallel-multiple",
    "toolalpaca",
    "restbench-tmdb",
    "restbench-spotify",
)

#: BFCL category -> file stem under ``bfcl/`` and ``bfcl/possible_answer/``.
BFCL_CATEGORIES: Mapping[str, str] = {
    "simple": "BFCL_v4_simple_python",
    "multiple": "BFCL_v4_multiple",
    "parallel": "BFCL_v4_parallel",
    "parallel-multiple": "BFCL_v4_parallel_multiple",
}

Call = tuple[str, dict[str, Any]]

_HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_TEMPLATE_VAR = re.compile(r"\{[^{}]*\}")


class DataUnavailable(FileNotFoundError):
    """The shared benchmark data (or one of its files) is not there."""


@dataclass(frozen=True)
class Task:
    """One benchmark item: a request, the docs it may use, and the gold calls."""

    dataset: str
    id: str
    instruction: str
    spec: Any
    spec_key: str
    calls: tuple[Call, ...]


def shared_data_dir() -> Path | None:
    """The shared data folder: ``$AUTOFEEDBACK_SHARED_DATA`` or ``<repo>/../shared/data``.

    >>> shared_data_dir()  # doctest: +SKIP
    PosixPath('/work/shared/data')
    """
    env = os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    return path if path.is_dir() else None


def load_dataset(name: str) -> list[Task]:
    """Load one dataset by its :data:`DATASETS` name.

    >>> len(load_dataset("restbench-spotify"))  # doctest: +SKIP
    57
    """
    if name == "api-bank":
        return load_api_bank()
    if name == "toolalpaca":
        return load_toolalpaca()
    if name.startswith("bfcl-"):
        return load_bfcl(name.removeprefix("bfcl-"))
    if name.startswith("restbench-"):
        return load_restbench(name.removeprefix("restbench-"))
    raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")


# -- helpers ----------------------------------------------------------------------


def _root() -> Path:
    root = shared_data_dir()
    if root is None:
        raise DataUnavailable(
            "shared benchmark data not found: set AUTOFEEDBACK_SHARED_DATA or place it at "
            "<repo>/../shared/data"
        )
    return root


def _data_file(root: Path, *parts: str) -> Path:
    path = root.joinpath(*parts)
    if not path.is_file():
        raise DataUnavailable(f"missing data file {path}")
    return path


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def spec_key(spec: Any) -> str:
    """A short hash of the canonical JSON of ``spec``: equal for equal doc sets."""
    payload = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# -- API-Bank ---------------------------------------------------------------------

_API_DESCRIPTIONS = "API descriptions:"


def api_bank_docs(instruction: str) -> list[dict[str, Any]]:
    """The API docs embedded as JSON lines after ``API descriptions:`` in an instruction."""
    _, found, tail = instruction.partition(_API_DESCRIPTIONS)
    if not found:
        return []
    docs: list[dict[str, Any]] = []
    for line in tail.splitlines():
        line = line.strip()
        if line.startswith("{"):
            doc = json.loads(line)
            if isinstance(doc, dict):
                docs.append(doc)
    return docs


def parse_api_bank_calls(text: str) -> tuple[Call, ...]:
    """Parse ``API-Request: [Name(k='v', ...)]`` into calls, with :mod:`ast` only.

    >>> parse_api_bank_calls("API-Request: [ToolSearcher(keywords='weather')]")
    (('ToolSearcher', {'keywords': 'weather'}),)
    """
    body = text.strip()
    if body.startswith("API-Request:"):
        body = body[len("API-Request:") :].strip()
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError:
        return (_parse_api_bank_loose(body),)
    nodes = tree.elts if isinstance(tree, ast.List) else [tree]
    calls: list[Call] = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise ValueError(f"not a call: {ast.unparse(node)}")
        name = ast.unparse(node.func)
        args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        calls.append((name, args))
    return tuple(calls)


_LOOSE_CALL = re.compile(r"^\[?\s*([\w.]+)\((.*)\)\s*\]?$", re.DOTALL)
# A value runs to the first place where ", key=" or the end follows: quoted values end at
# such a quote, so a quoted value may contain the quote and ", " freely.
_LOOSE_ARG = re.compile(
    r"""(\w+)\s*=\s*('.*?'|".*?"|\[.*?\]|\{.*?\}|[^,]*?)\s*(?=,\s*\w+\s*=|$)""", re.DOTALL
)


def _parse_api_bank_loose(body: str) -> Call:
    """31 API-Bank gold calls quote a list literal with the same quote it contains
    (``attendees='['John', 'Jane']'``), which is not Python. Split on ``, key=`` instead;
    a quoted value whose inside is a list/dict literal becomes that list/dict (the
    documented type of every such parameter is ``list``)."""
    m = _LOOSE_CALL.match(body.strip())
    if m is None:
        raise ValueError(f"not an API-Bank call: {body!r}")
    args: dict[str, Any] = {}
    for arg in _LOOSE_ARG.finditer(m.group(2)):
        raw = arg.group(2)
        try:
            value: Any = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw
            if isinstance(value, str) and value[:1] in "[{":
                with contextlib.suppress(ValueError, SyntaxError):
                    value = ast.literal_eval(value)
        args[arg.group(1)] = value
    return m.group(1), args


@cache  # keyed by the data folder too, so AUTOFEEDBACK_SHARED_DATA can change
def _load_api_bank(root: Path) -> tuple[Task, ...]:
    items = _read_json(_data_file(root, "api-bank", "level-1-api.json"))
    tasks = []
    # ``id`` restarts in every source dialogue file; the position in the list is unique.
    for index, item in enumerate(items):
        docs = api_bank_docs(item["instruction"])
        instruction = item["input"].replace("Generate API Request:", "").strip()
        tasks.append(
            Task(
                dataset="api-bank",
                id=f"api-bank-{index}",
                instruction=instruction,
                spec=docs,
                spec_key=spec_key(docs),
                calls=parse_api_bank_calls(item["expected_output"]),
            )
        )
    return tuple(tasks)


def load_api_bank() -> list[Task]:
    """API-Bank level-1: 399 dialogues, one gold call each.

    >>> load_api_bank()[0].calls[0][0]  # doctest: +SKIP
    'ModifyRegistration'
    """
    return list(_load_api_bank(_root()))


def api_bank_doc_set() -> list[dict[str, Any]]:
    """Every API-Bank level-1 API doc once (49), in order of first appearance: the
    union of the doc sets embedded in the dialogues.

    >>> len(api_bank_doc_set())  # doctest: +SKIP
    49
    """
    seen: dict[str, dict[str, Any]] = {}
    for task in _load_api_bank(_root()):
        for doc in task.spec:
            seen.setdefault(str(doc.get("name")), doc)
    return list(seen.values())


# -- BFCL -------------------------------------------------------------------------


def bfcl_value(allowed: Any) -> tuple[bool, Any]:
    """Pick one gold value from BFCL's allowed values: ``(present, value)``.

    The first allowed value, or absent when that is ``""``; dict values and lists of
    dicts are resolved the same way, key by key.

    >>> bfcl_value(["units", ""]), bfcl_value(["", 0])
    ((True, 'units'), (False, None))
    """
    if not isinstance(allowed, list):
        return True, allowed
    if not allowed or allowed[0] == "":
        return False, None
    return True, _bfcl_resolve(allowed[0])


def _bfcl_resolve(value: Any) -> Any:
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return _bfcl_args(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_bfcl_resolve(v) for v in value]
    return value


def _bfcl_args(params: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, allowed in params.items():
        present, value = bfcl_value(allowed)
        if present:
            out[key] = value
    return out


def _bfcl_instruction(question: Iterable[Any]) -> str:
    texts: list[str] = []
    for turn in question:
        messages = turn if isinstance(turn, list) else [turn]
        texts.extend(
            str(m.get("content", ""))
            for m in messages
            if isinstance(m, dict) and m.get("role") == "user"
        )
    return "\n".join(texts)


@cache
def _load_bfcl(root: Path, category: str) -> tuple[Task, ...]:
    stem = BFCL_CATEGORIES[category]
    questions = _read_jsonl(_data_file(root, "bfcl", f"{stem}.json"))
    answer_file = _data_file(root, "bfcl", "possible_answer", f"{stem}.json")
    answers = {a["id"]: a for a in _read_jsonl(answer_file)}
    tasks = []
    for q in questions:
        answer = answers.get(q["id"], {"ground_truth": []})
        calls = tuple(
            (name, _bfcl_args(params))
            for gt in answer["ground_truth"]
            for name, params in gt.items()
        )
        tasks.append(
            Task(
                dataset=f"bfcl-{category}",
                id=q["id"],
                instruction=_bfcl_instruction(q["question"]),
                spec=q["function"],
                spec_key=spec_key(q["function"]),
                calls=calls,
            )
        )
    return tuple(tasks)


def load_bfcl(category: str) -> list[Task]:
    """One BFCL category: ``simple`` (400), ``multiple`` (200), ``parallel`` (200) or
    ``parallel-multiple`` (200). ``simple_python``/``parallel_multiple`` spellings work too.

    >>> len(load_bfcl("parallel"))  # doctest: +SKIP
    200
    """
    key = category.replace("_", "-").removesuffix("-python")
    if key not in BFCL_CATEGORIES:
        raise ValueError(f"unknown BFCL category {category!r}; known: {', '.join(BFCL_CATEGORIES)}")
    return list(_load_bfcl(_root(), key))


# -- ToolAlpaca -------------------------------------------------------------------


def _as_obj(value: Any) -> Any:
    """ToolAlpaca stores some fields as Python-literal strings in other releases."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return ast.literal_eval(value)
    return value


def _named_toolalpaca_doc(api: Mapping[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(api["Documentation"])
    projection = _as_obj(api.get("Function_Projection") or {})
    for name, target in projection.items():
        path, method = target[0], str(target[1]).lower()
        operation = doc.get("paths", {}).get(path, {}).get(method)
        if isinstance(operation, dict) and not operation.get("operationId"):
            operation["operationId"] = name
    return doc


@cache
def _load_toolalpaca(root: Path) -> tuple[tuple[Task, ...], tuple[tuple[str, str, str], ...]]:
    apis = _read_json(_data_file(root, "toolalpaca", "eval_real.json"))
    unparseable: list[tuple[str, str, str]] = []
    tasks = []
    for api in apis:
        doc = _named_toolalpaca_doc(api)
        key = spec_key(doc)
        instructions = _as_obj(api["Instructions"])
        answers = _as_obj(api["Golden_Answers"])
        for i, instruction in enumerate(instructions):
            task_id = f"toolalpaca-{api['Name']}-{i}"
            calls: list[Call] = []
            for step in answers[i] if i < len(answers) and answers[i] else []:
                raw = step.get("Action_Input") or "{}"
                try:
                    args = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    unparseable.append((task_id, step["Action"], raw))
                    continue
                calls.append((step["Action"], args if isinstance(args, dict) else {}))
            tasks.append(
                Task(
                    dataset="toolalpaca",
                    id=task_id,
                    instruction=instruction,
                    spec=doc,
                    spec_key=key,
                    calls=tuple(calls),
                )
            )
    return tuple(tasks), tuple(unparseable)


def toolalpaca_unparseable() -> list[tuple[str, str, str]]:
    """ToolAlpaca golden calls dropped because ``Action_Input`` is not JSON, as
    ``(task id, Action, raw input)``.

    >>> [t for t, _, _ in toolalpaca_unparseable()]  # doctest: +SKIP
    ['toolalpaca-CurrencyBeacon-4', 'toolalpaca-CurrencyBeacon-8', ...]
    """
    return list(_load_toolalpaca(_root())[1])


def toolalpaca_docs() -> dict[str, dict[str, Any]]:
    """ToolAlpaca's 11 real-API OpenAPI docs by API name, with ``Function_Projection``'s
    operation names written in as ``operationId`` (shared with the tasks: read-only).

    >>> sorted(toolalpaca_docs())[:2]  # doctest: +SKIP
    ['AviationAPI', 'Cataas']
    """
    out: dict[str, dict[str, Any]] = {}
    for task in _load_toolalpaca(_root())[0]:
        out.setdefault(task.id.removeprefix("toolalpaca-").rsplit("-", 1)[0], task.spec)
    return out


def load_toolalpaca() -> list[Task]:
    """ToolAlpaca real-API eval set: 11 APIs, 114 instructions.

    >>> load_toolalpaca()[0].calls  # doctest: +SKIP
    (('PublicHolidayIsTodayPublicHoliday', {'countryCode': 'CN'}),)
    """
    return list(_load_toolalpaca(_root())[0])


# -- RestBench --------------------------------------------------------------------


def _operation_names(spec: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(METHOD, template with variables blanked) -> the operation's catalog name."""
    out: dict[tuple[str, str], str] = {}
    for path, item in (spec.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        for method in _HTTP_METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                name = op.get("operationId") or f"{method.upper()} {path}"
                out.setdefault((method.upper(), _TEMPLATE_VAR.sub("{}", path)), name)
    return out


def normalise_step(step: str) -> tuple[str, str]:
    """``" GET  /search/movie "`` -> ``("GET", "/search/movie")``."""
    method, _, path = " ".join(step.split()).partition(" ")
    return method.upper(), path.replace(" ", "")


@cache
def _load_restbench(root: Path, name: str) -> tuple[Task, ...]:
    spec = _read_json(_data_file(root, "restbench", f"{name}_oas.json"))
    queries = _read_json(_data_file(root, "restbench", f"{name}.json"))
    names = _operation_names(spec)
    key = spec_key(spec)
    tasks = []
    for i, item in enumerate(queries):
        calls: tuple[Call, ...] = ()
        if item.get("solution"):
            method, path = normalise_step(item["solution"][0])
            op_name = names.get((method, _TEMPLATE_VAR.sub("{}", path)), f"{method} {path}")
            calls = ((op_name, {}),)
        tasks.append(
            Task(
                dataset=f"restbench-{name}",
                id=f"restbench-{name}-{i}",
                instruction=item["query"],
                spec=spec,
                spec_key=key,
                calls=calls,
            )
        )
    return tuple(tasks)


def load_restbench(name: str) -> list[Task]:
    """RestBench ``tmdb`` (100 queries) or ``spotify`` (57 queries).

    >>> load_restbench("tmdb")[0].calls  # doctest: +SKIP
    (('GET_search_person', {}),)
    """
    if name not in ("tmdb", "spotify"):
        raise ValueError(f"unknown RestBench set {name!r}; known: tmdb, spotify")
    return list(_load_restbench(_root(), name))
