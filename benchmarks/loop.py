"""The paper's Tables 3 and 5 on this machine: does feedback make a real model's
requests correct, and what does it cost?

Tasks from ``../shared/data`` (API-Bank level-1 with its docs and gold calls, ToolAlpaca
eval_real with its OpenAPI docs), each served by the sandbox on 127.0.0.1 in terse mode:
an error carries only an ``info_code``, documented in an error-code page that the RAG
index holds next to the API docs, so only the docs explain it. Every setting measures
only what it names:

* Base: one model call, nothing fed back;
* Static: the scanner's feedback only (a request with E1-E3 findings is never sent);
* Dynamic: every parsed request is sent whatever the scanner thinks, and only the
  server's answer with the retrieved explanation is fed back;
* Static & Dynamic: both, static rounds first (the paper's order);
* Static & Dynamic w/o DR: the same, the explanation withheld (the paper's Table 5).

Greedy decoding (temperature 0), and the model is asked each distinct conversation once
per task: every setting starts from the same first answer (Base costs one call per task,
the others only their extra rounds). Tokens and wall time are charged to each setting as
if it ran alone. Accuracy: the final request names the gold API and carries the gold
call's required arguments, values normalised. The paired view compares each setting with
Base on the same tasks: the repair rate (Base failures it fixes) and the regression rate
(Base successes it breaks), each with a 95 % Wilson interval.

Each finished task is appended to a JSONL checkpoint, so a stopped run resumes where it
stopped (``--checkpoint``, on by default next to nothing in the repo: /tmp).

    python benchmarks/loop.py --llm local:1.5b --tasks 200
    python benchmarks/loop.py --llm http://127.0.0.1:8000/v1 --model NAME --tasks 200

Tasks alternate API-Bank and ToolAlpaca, each dataset in a seeded shuffle, so any prefix
of a run is a random sample of both.

``--slice dynamic`` (issue 38): only the tasks where the static scan can pass and the
server still refuses: those whose gold call gives a value to a parameter under a rule
its description states and its schema does not (``Format: %Y-%m-%d``, ``no more than 50
characters``; :mod:`autofeedback.serve._doc_rules`), or calls an operation whose error
responses document a state error (:mod:`autofeedback.serve._sandbox_refusals`). The sandbox
enforces both, with the documented code only; Base, Static, Dynamic and Static &
Dynamic run side by side, paired. Its checkpoint and the model's answers are kept
under ``benchmarks/.work/`` so that a rerun replays them.

    python benchmarks/loop.py --llm local:1.5b --slice dynamic --tasks 40

``--slice state``: the shared data holds no state errors, so these are the project's own
28 requests against ``specs/examples/bookings.yaml`` (:mod:`benchmarks._state_tasks`): a
name already taken, the venue quota, a booking already cancelled or changed once
cancelled, and controls where nothing is refused. The state is made through the API
before each setting, and each task is judged by its own check on the calls made and
the sandbox's final state. ``--repair sure`` turns the certain repairs on in all four
settings.

    python benchmarks/loop.py --llm local:1.5b --slice state --tasks 28
    python benchmarks/loop.py --llm local:1.5b --slice state --tasks 28 --repair sure
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, FeedbackLoop, Scanner
from autofeedback.checks._check_name import check_name
from autofeedback.core._model import ApiRequest
from autofeedback.core._resolve import request_args
from autofeedback.llm import load_llm
from autofeedback.loop._llm import LLMClient, Usage
from autofeedback.sandbox import Sandbox
from autofeedback.serve._sandbox import DEFAULT_ERROR_CODES
from benchmarks import _datasets
from benchmarks._records import after_last_call
from benchmarks._results import write_section

#: The paper's settings, with this project's own additions turned off (focus_docs and the
#: certain repairs are on by default)
_PAPER_ONLY = {"skeleton": False, "focus_docs": False, "repair": "off"}
SETTINGS: dict[str, dict[str, Any]] = {
    "Base": {"static": False, "dynamic": False, "repair": "off"},
    "Static": {"static": True, "dynamic": False, **_PAPER_ONLY},
    "Dynamic": {"static": False, "dynamic": True, "gate": False, **_PAPER_ONLY},
    "Static & Dynamic": {"static": True, "dynamic": True, **_PAPER_ONLY},
    "Static & Dynamic w/o DR": {
        "static": True,
        "dynamic": True,
        "retrieve_docs": False,
        **_PAPER_ONLY,
    },
}
PAPER = tuple(SETTINGS)
#: Beyond the paper, one change at a time against Static & Dynamic (the last two: the
#: strong baseline the paper only mentions, grammar-constrained decoding, alone and with
#: feedback).
BEYOND: dict[str, dict[str, Any]] = {
    "S&D + corrected call": {"static": True, "dynamic": True, **_PAPER_ONLY, "skeleton": True},
    "S&D + focused docs": {"static": True, "dynamic": True, **_PAPER_ONLY, "focus_docs": True},
    "S&D + retry on repeat": {
        "static": True,
        "dynamic": True,
        **_PAPER_ONLY,
        "repeat_retries": 1,
    },
    # the two that beat Static & Dynamic alone, together
    "S&D + corrected call + focused docs": {
        "static": True,
        "dynamic": True,
        "skeleton": True,
        "focus_docs": True,
        "repair": "off",
    },
    "Grammar": {"static": False, "dynamic": False, "constrain": True, "repair": "off"},
    # issue 27: what is certain is repaired before the request is sent or fed back
    "S&D + repair": {"static": True, "dynamic": True, **_PAPER_ONLY, "repair": "sure"},
    "Grammar + S&D": {"static": True, "dynamic": True, **_PAPER_ONLY, "constrain": True},
}
SETTINGS.update(BEYOND)

#: What each of the sandbox's terse codes means: the error-code page a real API
#: documents, and the page the dynamic analysis has to find.
CODE_MEANINGS: dict[str, str] = {
    "missing_parameter": "a required parameter or the required request body is missing",
    "unknown_parameter": "the request has a parameter or body property the API does not "
    "document (a misspelt or invented parameter name)",
    "wrong_type": "a parameter value has the wrong type (text where a number, boolean, "
    "array or object is documented, or the reverse)",
    "bad_format": "a text value breaks its documented format or pattern (a date, time, "
    "e-mail or identifier written the wrong way)",
    "bad_value": "a value is outside its documented set of allowed values (enum) or its "
    "numeric or length bounds",
    "invalid_body": "the request body is not JSON, or not sent as application/json",
    "unknown_path": "no documented API or path matches the request: the API name or path is wrong",
    "method_not_allowed": "the path exists but the HTTP method is not documented for it",
    "body_too_large": "the request body is larger than the server accepts",
    "not_found": "the request names an id that no earlier answer returned: take the id from "
    "the response of the API that lists or creates it",
    "conflict": "a value that must be unique (a name, an e-mail) is already held by another "
    "resource: choose another value, or list the existing ones first",
    "invalid_state": "the resource is in a state this API refuses (already cancelled, shipped "
    "or closed): read the resource's status first",
    "quota_exceeded": "more resources were created than the documented quota allows",
}


def error_code_docs() -> str:
    """The sandbox's terse codes as a Markdown page, one section per code."""
    assert set(CODE_MEANINGS) == set(DEFAULT_ERROR_CODES), "a sandbox code has no meaning"
    parts = ["# Error codes\n\nErrors are answered with an `info_code` only."]
    for kind, (status, code) in DEFAULT_ERROR_CODES.items():
        parts.append(
            f"## info_code {code}\n\nHTTP {status}, info_code {code}: {CODE_MEANINGS[kind]}."
        )
    return "\n\n".join(parts) + "\n"


def error_code_docs_file() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="autofeedback-codes-"))
    path = folder / "error-codes.md"
    path.write_text(error_code_docs(), encoding="utf-8")
    return path


# -- one model call per distinct conversation -------------------------------------------


class SharedLLM:
    """Asks the wrapped model each distinct conversation once and replays the answer
    (greedy decoding makes that exact); ``charged`` adds up the seconds and tokens the
    original calls cost, so that each setting is charged as if it ran alone.

    With ``store`` (a JSONL file) the answers outlive the run: a resumed run, or a later
    run that adds a setting, asks the model only the conversations no earlier run asked.
    Keys cover the model's name, the messages, the decoding constraint (a grammar's
    JSON schema) and the stop strings, so a cached answer is exactly the answer the model
    would give."""

    def __init__(self, llm: LLMClient, *, name: str = "", store: Path | None = None) -> None:
        self.llm = llm
        self.name = name
        self.store = store
        self.memo: dict[str, tuple[str, Usage | None, float]] = {}
        self.last_usage: Usage | None = None
        self.charged_seconds = 0.0  # what the answers given cost when first made
        self.fresh_seconds = 0.0  # what the calls actually made took
        self.model_calls = 0
        if store is not None and store.exists():
            for line in store.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    usage = Usage(**row["usage"]) if row.get("usage") else None
                    self.memo[row["key"]] = (row["text"], usage, float(row["seconds"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut off by a stop mid-write: asked again

    def reset(self) -> None:
        if self.store is None:
            self.memo.clear()

    def _key(self, messages: Sequence[Mapping[str, str]], schema: Any, stop: Any = None) -> str:
        # the schema as written: its key order is the order the grammar writes keys in
        payload: list[Any] = [
            self.name,
            [dict(m) for m in messages],
            None if schema is None else json.dumps(schema),
        ]
        if stop:  # only then: the keys of answers stored without stop strings stay valid
            payload.append(list(stop))
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def complete(self, messages: Sequence[Mapping[str, str]], **options: Any) -> str:
        schema = options.get("schema")
        key = self._key(messages, schema, options.get("stop"))
        if key not in self.memo:
            started = time.perf_counter()
            text = self.llm.complete(messages, **options)
            usage = getattr(self.llm, "last_usage", None)
            self.memo[key] = (text, usage, time.perf_counter() - started)
            self.fresh_seconds += self.memo[key][2]
            self.model_calls += 1
            if self.store is not None:
                row = {"key": key, "text": text, "seconds": round(self.memo[key][2], 3)}
                row["usage"] = asdict(usage) if usage is not None else None
                with open(self.store, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
        text, self.last_usage, seconds = self.memo[key]
        self.charged_seconds += seconds
        return text


# -- judging ------------------------------------------------------------------------------


def _norm(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_norm(v) for v in value) + "]"
    return " ".join(str(value).strip().lower().split())


def final_call(request: ApiRequest | None, catalog: ApiCatalog) -> tuple[str, dict[str, Any]]:
    """The API name and arguments a final request amounts to, whatever its format."""
    if request is None:
        return "", {}
    named = check_name(request, catalog)
    name = named.operation.name if named.operation else (request.name or "")
    args = {a.name: a.value for a in request_args(request, named.path_params)}
    return name, args


def matches(
    request: ApiRequest | None, gold: tuple[str, Mapping[str, Any]], catalog: ApiCatalog
) -> bool:
    name, args = final_call(request, catalog)
    if name != gold[0]:
        return False
    op = catalog.get(name)
    required = {p.name for p in op.parameters if p.required} if op else set(gold[1])
    return all(
        k in args and _norm(args[k]) == _norm(v) for k, v in gold[1].items() if k in required
    )


def task_list(n: int) -> list[_datasets.Task]:
    """``n`` single-call tasks alternating API-Bank and ToolAlpaca (ToolAlpaca has 94;
    API-Bank fills the rest), each dataset in a seeded shuffle so that every prefix of a
    run is a random sample of both."""
    lists = []
    for tasks in (_datasets.load_toolalpaca(), _datasets.load_api_bank()):
        usable = [t for t in tasks if len(t.calls) == 1]
        random.Random(8).shuffle(usable)
        lists.append(usable)
    ta, ab = lists
    ta = ta[: n // 2]
    ab = ab[: n - len(ta)]
    out: list[_datasets.Task] = []
    for i in range(max(len(ab), len(ta))):
        out += [x[i] for x in (ab, ta) if i < len(x)]
    return out[:n]


#: the settings the dynamic slice compares (issue 38)
SLICE_SETTINGS = ("Base", "Static", "Dynamic", "Static & Dynamic")
#: where the slice's checkpoints and the model's answers are kept (ignored by git)
WORK = Path(__file__).resolve().parent / ".work" / "loop-dynamic"
STATE_WORK = Path(__file__).resolve().parent / ".work" / "loop-state"


def server_rules(task: _datasets.Task, catalog: ApiCatalog) -> list[str]:
    """What only the server enforces on ``task``'s gold call: each rule a description
    states for a parameter the call gives a value (``time: Format: %Y-%m-%d %H:%M:%S``),
    and each state error the called operation documents. Empty: the static scan sees
    everything the sandbox would refuse."""
    from autofeedback.serve._doc_rules import param_rules
    from autofeedback.serve._sandbox_state import SessionState

    name, args = task.calls[0]
    op = catalog.get(name)
    if op is None:
        return []
    out = [str(r) for p in op.parameters if p.name in args for r in param_rules(p)]
    if op.error_responses:
        state = SessionState(catalog.operations)
        out += [f"{r.kind}: {r.text}" for r in state._rules.get(op.name, ())]
    return out


def dynamic_slice(n: int) -> list[_datasets.Task]:
    """The first ``n`` single-call tasks (API-Bank and ToolAlpaca, alternating as in
    :func:`task_list`, each dataset in the same seeded shuffle) whose gold call meets a
    rule only the server enforces (:func:`server_rules`)."""
    lists = []
    for tasks in (_datasets.load_toolalpaca(), _datasets.load_api_bank()):
        catalogs: dict[str, ApiCatalog] = {}
        usable = []
        for t in tasks:
            if len(t.calls) != 1:
                continue
            if t.spec_key not in catalogs:
                catalogs[t.spec_key] = ApiCatalog.from_obj(t.spec, source=t.dataset)
            if server_rules(t, catalogs[t.spec_key]):
                usable.append(t)
        random.Random(8).shuffle(usable)
        lists.append(usable)
    ta, ab = lists
    out: list[_datasets.Task] = []
    for i in range(max(len(ab), len(ta))):
        out += [x[i] for x in (ab, ta) if i < len(x)]
    return out[:n]


def intent(task: _datasets.Task) -> str:
    """What the gold call answers: the last user turn of an API-Bank dialogue (after the
    calls already made). Of the 399 gold calls, the scanner flags 63 with an E2.1 error
    against the whole dialogue, 30 against the text after the last call (the AI's reply
    to it still names the earlier API) and 12 against the last user turn."""
    if task.dataset != "api-bank":
        return task.instruction
    tail = after_last_call(task.instruction)
    at = tail.rfind("User:")
    return tail[at:] if at >= 0 else tail


# -- statistics ---------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of ``k`` successes in ``n`` trials.

    >>> [round(x, 3) for x in wilson(8, 10)]
    [0.49, 0.943]
    """
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "n/a (0 tasks)"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.3f} [{lo:.2f}, {hi:.2f}]"


# -- running ------------------------------------------------------------------------------


@dataclass
class Outcome:
    correct: bool
    tokens: int
    seconds: float
    attempts: int
    stop: str
    final: str  # the final request, for reading a run's log
    repairs: int = 0  # what autofeedback repaired over the task's attempts
    refused: int = 0  # attempts the server answered with an error status


class Runner:
    """The sandboxes, scanners and doc indexes of every spec, built once."""

    def __init__(
        self, llm: SharedLLM, settings: Sequence[str], *, repair: str | None = None
    ) -> None:
        from doc_index import DocIndex
        from retriever import ApiRetriever

        self.llm = llm
        self.settings = list(settings)
        #: the certain repairs in every setting (``"sure"``), in place of each setting's own
        self.repair = repair
        self.retriever = ApiRetriever()
        self.codes = error_code_docs_file()
        self._index_cls = DocIndex
        self.catalogs: dict[str, ApiCatalog] = {}
        self.sandboxes: dict[str, Sandbox] = {}
        self.scanners: dict[str, Scanner] = {}
        self.indexes: dict[str, Any] = {}

    def _prepare(self, task: _datasets.Task) -> str:
        key = task.spec_key
        if key not in self.catalogs:
            catalog = ApiCatalog.from_obj(task.spec, source=task.dataset)
            self.catalogs[key] = catalog
            self.sandboxes[key] = Sandbox(catalog, terse=True).start()
            self.scanners[key] = Scanner(catalog, retriever=self.retriever)
            self.indexes[key] = self._index_cls.build(catalog, docs=[self.codes])
        return key

    def run_task(self, task: _datasets.Task, settings: Sequence[str]) -> dict[str, Outcome]:
        key = self._prepare(task)
        catalog = self.catalogs[key]
        self.llm.reset()
        out: dict[str, Outcome] = {}
        for setting in settings:
            result, seconds = self._run_loop(key, setting, task.instruction, intent(task))
            name, args = final_call(result.request, catalog)
            out[setting] = _outcome(
                result,
                seconds,
                correct=matches(result.request, task.calls[0], catalog),
                final=f"{name}({json.dumps(args, sort_keys=True, default=str)})" if name else "",
            )
        return out

    def run_state_task(self, task: Any, settings: Sequence[str]) -> dict[str, Outcome]:
        """One task of the state slice (:mod:`benchmarks._state_tasks`): per setting, the
        sandbox reset and seeded through the API, the loop run, and the run judged by
        the task's own check on the calls made and the sandbox's state."""
        from benchmarks import _state_tasks as st

        key = task.spec_key
        if key not in self.catalogs:
            catalog = st.catalog()
            self.catalogs[key] = catalog
            self.sandboxes[key] = Sandbox(catalog, terse=True).start()
            self.scanners[key] = Scanner(catalog, retriever=self.retriever)
            self.indexes[key] = self._index_cls.build(catalog, docs=[self.codes])
        catalog, sandbox = self.catalogs[key], self.sandboxes[key]
        self.llm.reset()
        out: dict[str, Outcome] = {}
        for setting in settings:
            sandbox.reset()  # every setting meets the same state, made by the same calls
            refs = st.seed(sandbox.url, task)
            text = st.instruction(task, refs)
            result, seconds = self._run_loop(key, setting, text, text)
            made = st.made_calls(result.attempts, catalog)
            trail = "; ".join(
                f"{m.name or '(no call)'}({json.dumps(dict(m.args), sort_keys=True, default=str)})"
                f" -> {m.status or 'not sent'}"
                for m in made
            )
            out[setting] = _outcome(
                result, seconds, correct=st.judge(task, refs, made, sandbox.url), final=trail
            )
        return out

    def _run_loop(self, key: str, setting: str, instruction: str, intent: str) -> tuple[Any, float]:
        """The feedback loop of ``setting`` on ``instruction``, and the seconds charged
        to it: the time outside the model plus what its calls cost when first made."""
        loop = FeedbackLoop(
            self.llm,
            self.catalogs[key],
            base_url=self.sandboxes[key].url,
            scanner=self.scanners[key],
            doc_index=self.indexes[key],
            timeout=10.0,
            **{**SETTINGS[setting], **({"repair": self.repair} if self.repair else {})},
        )
        self.llm.charged_seconds = self.llm.fresh_seconds = 0.0
        started = time.perf_counter()
        result = loop.run(instruction, intent=intent)
        own = time.perf_counter() - started - self.llm.fresh_seconds
        return result, round(own + self.llm.charged_seconds, 3)

    def close(self) -> None:
        for sandbox in self.sandboxes.values():
            sandbox.stop()


def _outcome(result: Any, seconds: float, *, correct: bool, final: str) -> Outcome:
    return Outcome(
        correct=correct,
        tokens=result.tokens,
        seconds=seconds,
        attempts=len(result.attempts),
        stop=result.stop_reason,
        repairs=sum(len(a.repairs) for a in result.attempts),
        refused=sum(1 for a in result.attempts if a.status and a.status >= 400),
        final=final,
    )


OutcomeT = TypeVar("OutcomeT")


def load_checkpoint(
    path: Path, outcome: Callable[..., OutcomeT]
) -> tuple[dict[str, dict[str, OutcomeT]], set[str]]:
    """Every task's outcomes per setting (rows of later runs that added settings merge
    into the task's earlier ones), and the commits the rows were measured at.
    ``outcome`` builds one outcome from its JSON fields (``benchmarks/tasks.py`` has
    its own)."""
    done: dict[str, dict[str, OutcomeT]] = {}
    commits: set[str] = set()
    if not path.exists():
        return done, commits
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            outcomes = {s: outcome(**o) for s, o in row["outcomes"].items()}
        except (ValueError, KeyError, TypeError):
            continue  # a line cut off by a stop mid-write: that task runs again
        done.setdefault(row["task"], {}).update(outcomes)
        if row.get("commit"):
            commits.add(row["commit"])
    return done, commits


def _commit() -> str:
    import subprocess

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
    except OSError:
        return ""
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="local:1.5b")
    parser.add_argument("--model")
    parser.add_argument("--tasks", type=int, default=200, help="tasks in all (default 200)")
    parser.add_argument(
        "--slice",
        choices=("all", "dynamic", "state"),
        default="all",
        help="'dynamic': only tasks whose gold call meets a rule only the server enforces; "
        "'state': requests the server refuses for its state (benchmarks/_state_tasks.py); "
        "both: Base, Static, Dynamic and Static & Dynamic, kept under benchmarks/.work/",
    )
    parser.add_argument(
        "--settings",
        default=",".join(PAPER),
        help="comma-separated, Base among them (default: the paper's five); "
        "'beyond' means Base, Static & Dynamic and every option beyond the paper",
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        help="JSONL of finished tasks (default: /tmp/autofeedback-loop-<llm>-<tasks>.jsonl)",
    )
    parser.add_argument(
        "--answers",
        type=Path,
        help="JSONL of the model's answers, reused by later runs "
        "(default: the checkpoint's name with .answers.jsonl)",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="tabulate the checkpoint, run nothing"
    )
    parser.add_argument(
        "--repair",
        choices=("sure",),
        help="--slice state: the certain repairs on in every setting (the product's default)",
    )
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.repair and args.slice != "state":
        print("--repair goes with --slice state", file=sys.stderr)
        return 2
    if _datasets.shared_data_dir() is None and args.slice != "state":
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    chosen = [s.strip() for s in args.settings.split(",")]
    if args.slice in ("dynamic", "state") and args.settings == ",".join(PAPER):
        chosen = list(SLICE_SETTINGS)
    if chosen == ["beyond"]:
        chosen = ["Base", "Static & Dynamic", *BEYOND]
    unknown = [s for s in chosen if s not in SETTINGS]
    if unknown or "Base" not in chosen:
        print(f"settings must include Base and be among {list(SETTINGS)}", file=sys.stderr)
        return 2
    safe = "".join(c if c.isalnum() else "-" for c in args.llm + (args.model or ""))
    tasks: Sequence[Any]
    if args.slice == "dynamic":
        WORK.mkdir(parents=True, exist_ok=True)
        checkpoint = args.checkpoint or WORK / f"{safe}-{args.tasks}.jsonl"
        tasks = dynamic_slice(args.tasks)
    elif args.slice == "state":
        from benchmarks._state_tasks import state_tasks

        STATE_WORK.mkdir(parents=True, exist_ok=True)
        repaired = "-repair" if args.repair else ""
        checkpoint = args.checkpoint or STATE_WORK / f"{safe}{repaired}.jsonl"
        tasks = state_tasks(args.tasks)
    else:
        checkpoint = args.checkpoint or Path(
            tempfile.gettempdir(), f"autofeedback-loop-{safe}-{args.tasks}.jsonl"
        )
        tasks = task_list(args.tasks)
    done, commits = load_checkpoint(checkpoint, Outcome)
    missing = {t.id: [s for s in chosen if s not in done.get(t.id, {})] for t in tasks}
    todo = [t for t in tasks if missing[t.id]]
    print(f"{len(tasks)} tasks, {len(tasks) - len(todo)} already in {checkpoint}", flush=True)
    started = time.perf_counter()
    if todo and not args.report_only:
        answers = args.answers or checkpoint.with_suffix(".answers.jsonl")
        if args.slice == "state" and not args.answers:  # one store for both runs
            answers = STATE_WORK / f"{safe}.answers.jsonl"
        name = args.llm + (f" {args.model}" if args.model else "")
        llm = load_llm(args.llm, **({"model": args.model} if args.model else {}))
        shared = SharedLLM(llm, name=name, store=answers)
        runner = Runner(shared, chosen, repair=args.repair)
        commit = _commit()
        commits.add(commit)
        try:
            with open(checkpoint, "a", encoding="utf-8") as fh:
                for task in todo:
                    outcomes = (
                        runner.run_state_task(task, missing[task.id])
                        if args.slice == "state"
                        else runner.run_task(task, missing[task.id])
                    )
                    done.setdefault(task.id, {}).update(outcomes)
                    row = {
                        "task": task.id,
                        "dataset": task.dataset,
                        "commit": commit,
                        "outcomes": {s: asdict(o) for s, o in outcomes.items()},
                    }
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    print(_progress(task, outcomes, len(done), len(tasks), started), flush=True)
        finally:
            runner.close()
    finished = [t for t in tasks if t.id in done and all(s in done[t.id] for s in chosen)]
    if not finished:
        print("no finished task to tabulate", file=sys.stderr)
        return 1
    if args.slice == "state":
        from benchmarks._state_tasks import state_table

        table = state_table({t.id: done[t.id] for t in finished}, chosen, finished, args, commits)
        print(table)
        if not args.no_write:
            cmd = f"python benchmarks/loop.py --llm {args.llm} --slice state --tasks {args.tasks}"
            cmd += f" --model {args.model}" if args.model else ""
            cmd += f" --repair {args.repair}" if args.repair else ""
            title = ", certain repairs on" if args.repair else ""
            write_section(f"Feedback loop, the state slice{title} ({args.llm})", cmd, table)
        return 0
    table = tabulate({t.id: done[t.id] for t in finished}, chosen, finished, args, commits)
    if args.slice == "dynamic":
        table = slice_header(finished, args) + "\n\n" + table
        table += "\n\n" + slice_goals({t.id: done[t.id] for t in finished}, chosen, finished)
    print(table)
    if not args.no_write and args.slice == "dynamic":
        cmd = f"python benchmarks/loop.py --llm {args.llm} --slice dynamic --tasks {args.tasks}"
        if args.model:
            cmd += f" --model {args.model}"
        write_section(f"Feedback loop, the dynamic slice ({args.llm})", cmd, table)
    elif not args.no_write:
        cmd = f"python benchmarks/loop.py --llm {args.llm} --tasks {args.tasks}"
        if args.model:
            cmd += f" --model {args.model}"
        if args.checkpoint:
            cmd += f" --checkpoint {args.checkpoint}"
        beyond = any(s in BEYOND for s in chosen)
        if beyond:
            every = chosen == ["Base", "Static & Dynamic", *BEYOND]
            cmd += f" --settings {'beyond' if every else repr(args.settings)}"
        grammar = any(s.startswith("Grammar") for s in chosen)
        title = (
            (
                "repair what is certain"
                if "S&D + repair" in chosen
                else "grammar-constrained decoding"
                if grammar
                else "beyond the paper"
            )
            if beyond
            else "paired settings"
        )
        write_section(f"Feedback loop, {title} ({args.llm})", cmd, table)
    return 0


def slice_header(tasks: Sequence[_datasets.Task], args: argparse.Namespace) -> str:
    """What the dynamic slice is, and how its tasks' rules break down."""
    catalogs: dict[str, ApiCatalog] = {}
    kinds: Counter[str] = Counter()
    for task in tasks:
        if task.spec_key not in catalogs:
            catalogs[task.spec_key] = ApiCatalog.from_obj(task.spec, source=task.dataset)
        for rule in server_rules(task, catalogs[task.spec_key]):
            kinds[_rule_kind(rule)] += 1
    per = ", ".join(f"{k} ×{v}" for k, v in kinds.most_common())
    return (
        f"**The dynamic slice** (issue 38): the first {len(tasks)} single-call tasks whose "
        "gold call meets a rule only the server enforces: a rule a parameter's description "
        "states and its schema does not, or a state error the operation documents (built "
        "by `dynamic_slice()` from the shared data). Rules met by the gold calls: "
        f"{per or 'none'}. The sandbox refuses a value that breaks one with the code alone "
        '(`{"info_code": 40004}`); Dynamic feeds back the documented cause, the part of '
        "the request it concerns and, where the docs name one, the next call "
        "(`autofeedback/loop/_explain.py`). The static scan does not read these rules."
    )


def _rule_kind(rule: str) -> str:
    head = rule.split(":", 1)[0]
    if head in ("duplicate", "state", "quota"):
        return f"state error ({head})"
    text = rule.lower()
    if "%" in text or "yyyy" in text:
        return "layout (Format: %Y-%m-%d...)"
    if "character" in text:
        return "length (no more than N characters)"
    return "other description rule"


def slice_goals(
    done: Mapping[str, Mapping[str, Outcome]],
    settings: Sequence[str],
    tasks: Sequence[_datasets.Task],
) -> str:
    """The issue's goals on the slice, each marked met or missed, and where the Base
    failures went."""
    fair = judged(done, settings, tasks)
    fails = [t.id for t in tasks if not fair["Base"][t.id]]
    lines = goal_lines(fair, settings, [t.id for t in tasks])
    refused = sum(1 for t in fails if done[t]["Base"].refused)
    lines += [
        "",
        f"Of the {len(fails)} Base failures, {refused} were refused by the server (the cases "
        "the dynamic check can explain); the rest were answered 2xx (a wrong API, or a "
        "wrong value the docs give no rule for) or never sent.",
    ]
    return "\n".join(lines)


def goal_lines(
    fair: Mapping[str, Mapping[str, bool]], settings: Sequence[str], ids: Sequence[str]
) -> list[str]:
    """Issue 38's goals as table rows, each marked met or missed: Dynamic and Static &
    Dynamic each repair ≥ 30 % of the Base failures and break ≤ 1 % of the Base
    successes, and Static & Dynamic beats Static (``fair``: per setting, task id ->
    correct)."""
    base = fair["Base"]
    fails = [t for t in ids if not base[t]]
    oks = [t for t in ids if base[t]]
    lines = ["| goal | measured | |", "|---|---|---|"]

    def rate(setting: str, among: list[str], want: bool) -> tuple[int, int]:
        return sum(fair[setting][t] == want for t in among), len(among)

    for setting in ("Dynamic", "Static & Dynamic"):
        if setting not in settings:
            continue
        k, n = rate(setting, fails, True)
        met = n > 0 and k / n >= 0.30
        lines.append(
            f"| {setting} repairs ≥ 30 % of Base failures | {_rate(k, n)} "
            f"| {'met' if met else '**missed**'} |"
        )
        k, n = rate(setting, oks, False)
        met = n == 0 or k / n <= 0.01
        lines.append(
            f"| {setting} regresses ≤ 1 % of Base successes | {_rate(k, n)} "
            f"| {'met' if met else '**missed**'} |"
        )
    if "Static" in settings and "Static & Dynamic" in settings:
        sd = sum(fair["Static & Dynamic"][t] for t in ids)
        st = sum(fair["Static"][t] for t in ids)
        lines.append(
            f"| Static & Dynamic above Static | {sd} vs {st} correct of {len(ids)} "
            f"| {'met' if sd > st else '**missed**'} |"
        )
    return lines


def _progress(
    task: _datasets.Task, outcomes: Mapping[str, Outcome], n: int, total: int, started: float
) -> str:
    marks = " ".join(
        f"{s.replace('Static & Dynamic', 'S&D').replace(' w/o DR', '-DR')}="
        f"{'ok' if o.correct else 'no'}/{o.stop}/{o.attempts}"
        for s, o in outcomes.items()
    )
    return f"[{n}/{total} {time.perf_counter() - started:.0f}s] {task.id:<18} {marks}"


def tabulate(
    done: Mapping[str, Mapping[str, Outcome]],
    settings: Iterable[str],
    tasks: Sequence[_datasets.Task],
    args: argparse.Namespace,
    commits: Iterable[str] = (),
) -> str:
    settings = list(settings)
    n = len(tasks)
    per = {d: sum(t.dataset == d for t in tasks) for d in ("api-bank", "toolalpaca")}
    fair = judged(done, settings, tasks)
    base = fair["Base"]
    against = any(s in BEYOND for s in settings) and "Static & Dynamic" in settings
    keys = sum(1 for t in tasks if _unguessable_args(t))
    lines = [
        f"Model: `{args.llm}`{' ' + args.model if args.model else ''}, greedy. **{n} tasks** "
        f"({per['api-bank']} API-Bank level-1 + {per['toolalpaca']} ToolAlpaca single-call, "
        f"the first {n} of the {args.tasks} in the run's seeded order"
        + ("; the run was stopped there and resumes from its checkpoint" if n < args.tasks else "")
        + "), the same tasks in every "
        "setting; sandbox in terse mode on 127.0.0.1, its codes documented in an error-code "
        "page in the RAG index; max 3 static and 2 dynamic rounds. Intervals: 95 % Wilson. "
        "Tokens and wall time are charged to each setting as if it ran alone (the shared "
        "first answer included). 2 CPU cores shared with other work, so wall times are "
        "upper bounds."
        + (f" Measured at commit {', '.join(sorted(c for c in commits if c))}." if commits else ""),
        "",
        "A request is correct when it names the gold API and carries the gold call's "
        "required arguments with the gold values (normalised). *Strict* judges every such "
        f"value; the other columns do not judge the value of a credential the user never "
        f"gave ({keys} of these tasks: ToolAlpaca's gold calls carry the dataset's own API "
        "keys, such as WolframAlpha's `appid`, which no instruction contains and a real "
        "deployment injects); the argument must still be there. API-Bank's tokens and "
        "passwords are in its dialogues and stay judged.",
        "",
        "| setting | accuracy (strict) | accuracy | repaired (Base failures fixed) "
        "| regressed (Base successes broken) | avg tokens / task | overhead (tokens / "
        "accuracy) | wall time / task (s) | model calls / task | stops: repeated / static "
        "budget / dynamic budget / blocked |"
        + (" vs Static & Dynamic: tasks better / worse (exact McNemar p) |" if against else ""),
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if against else ""),
    ]
    for setting in settings:
        outs = [done[t.id][setting] for t in tasks]
        strict = sum(o.correct for o in outs) / n
        acc = sum(fair[setting][t.id] for t in tasks) / n
        tok = statistics.mean(o.tokens for o in outs)
        fails = [t.id for t in tasks if not base[t.id]]
        oks = [t.id for t in tasks if base[t.id]]
        repaired = sum(fair[setting][t] for t in fails)
        regressed = sum(not fair[setting][t] for t in oks)
        stops = [
            sum(o.stop == s for o in outs)
            for s in ("repeated", "static-budget", "dynamic-budget", "blocked")
        ]
        paired = setting != "Base"
        lines.append(
            f"| {setting} | {strict:.3f} | {acc:.3f} "
            f"| {_rate(repaired, len(fails)) if paired else '—'} "
            f"| {_rate(regressed, len(oks)) if paired else '—'} | {tok:.0f} "
            f"| {f'{tok / acc:.0f}' if acc else '∞'} "
            f"| {statistics.mean(o.seconds for o in outs):.1f} "
            f"| {statistics.mean(o.attempts for o in outs):.2f} | {' / '.join(map(str, stops))} |"
            + (f" {_versus(fair, tasks, setting)} |" if against else "")
        )
    return "\n".join(lines)


def _unguessable_args(task: _datasets.Task) -> set[str]:
    """Gold arguments that are credentials the instruction does not contain."""
    from autofeedback.core._redact import is_sensitive

    text = _norm(task.instruction)
    return {
        k
        for k, v in task.calls[0][1].items()
        if (is_sensitive(k) or k.lower().replace("_", "") == "appid") and _norm(v) not in text
    }


def _parse_final(final: str) -> tuple[str, dict[str, Any]]:
    if not final or "(" not in final:
        return "", {}
    name, _, rest = final.partition("(")
    try:
        args = json.loads(rest[:-1])
    except ValueError:
        return name, {}
    return name, args if isinstance(args, dict) else {}


def judged(
    done: Mapping[str, Mapping[str, Outcome]],
    settings: Sequence[str],
    tasks: Sequence[_datasets.Task],
) -> dict[str, dict[str, bool]]:
    """Per setting and task: is the final request correct, credentials the user never
    gave not judged (see :func:`tabulate`)? Read from each outcome's final request."""
    catalogs: dict[str, ApiCatalog] = {}
    out: dict[str, dict[str, bool]] = {s: {} for s in settings}
    for task in tasks:
        if task.spec_key not in catalogs:
            catalogs[task.spec_key] = ApiCatalog.from_obj(task.spec, source=task.dataset)
        op = catalogs[task.spec_key].get(task.calls[0][0])
        gold_name, gold_args = task.calls[0]
        required = {p.name for p in op.parameters if p.required} if op else set(gold_args)
        skip = _unguessable_args(task)
        for setting in settings:
            outcome = done[task.id][setting]
            name, args = _parse_final(outcome.final)
            ok = name == gold_name and all(
                k in args and (k in skip or _norm(args[k]) == _norm(v))
                for k, v in gold_args.items()
                if k in required
            )
            out[setting][task.id] = ok or outcome.correct
    return out


def _versus(
    fair: Mapping[str, Mapping[str, bool]], tasks: Sequence[_datasets.Task], setting: str
) -> str:
    if setting not in BEYOND:
        return "—"
    sd = fair["Static & Dynamic"]
    better = sum(fair[setting][t.id] and not sd[t.id] for t in tasks)
    worse = sum(not fair[setting][t.id] and sd[t.id] for t in tasks)
    return f"{better} / {worse} (p = {mcnemar(better, worse):.2f})"


def mcnemar(better: int, worse: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs against a fair coin.

    >>> round(mcnemar(8, 1), 3)
    0.039
    >>> mcnemar(0, 0)
    1.0
    """
    n = better + worse
    if n == 0:
        return 1.0
    k = min(better, worse)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / float(2**n)
    return min(1.0, 2 * tail)


if __name__ == "__main__":
    sys.exit(main())
