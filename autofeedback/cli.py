"""Check LLM-generated API requests against an API spec: scan one output, audit a log,
check an agent's tool calls through an OpenAI-compatible or an MCP proxy, serve a sandbox,
build a doc index, or run the feedback loop against a live API.

``run(argv, stdout, stderr) -> int`` does the work and is what tests call;
``main()`` only exits with its result. Exit codes: 0 clean, 1 findings, 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

# only what every command needs: a command imports its own parts (the checks, the spec
# loaders, the servers) when it runs, so `autofeedback --version` imports none of them
from autofeedback._exceptions import AutoFeedbackError, SpecWarning
from autofeedback._install import install_hint

if TYPE_CHECKING:
    from autofeedback._catalog import ApiCatalog
    from autofeedback.audit._audit import AuditResult, AuditSummary

__all__ = ["main", "run"]


class _Usage(Exception):
    """Bad command-line input: reported in one line, exit 2."""


#: every error line the command writes starts with this
_ERROR = "autofeedback: error: "

_EXIT_CODES = """exit codes:
  0  clean: no errors (warnings may be listed)
  1  findings: at least one error, or the loop did not meet its requirement
  2  bad input: a missing or broken spec or log, bad options, an unreachable server"""

_EPILOG = f"""{_EXIT_CODES}

examples:
  autofeedback scan --spec specs/examples/bookshop.yaml "GET /books?query=dune&limit=ten"
  autofeedback audit specs/examples/requests.jsonl --spec specs/examples/bookshop.yaml
  autofeedback sandbox --spec specs/examples/bookshop.yaml --terse
  autofeedback run --spec specs/examples/bookshop.yaml --instruction "Find science books"
  autofeedback proxy --upstream http://127.0.0.1:8080/v1
  autofeedback mcp-proxy --log calls.jsonl -- python weather_server.py

environment:
  AUTOFEEDBACK_MODEL       model name for an OpenAI-compatible --llm URL (--model wins)
  OPENAI_API_KEY           key sent to an OpenAI-compatible --llm URL
  AUTOFEEDBACK_CACHE_DIR   cache of loaded specs and local models (~/.cache/autofeedback)
  AUTOFEEDBACK_EMBEDDER    embedding model of the semantic checks and the doc index

configuration:
  [tool.autofeedback] in the nearest pyproject.toml (searched from the current folder
  upwards) sets defaults; command-line flags override it. Keys:
  {{keys}}."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's layout and shows every meaningful default in the help."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if isinstance(action, argparse.BooleanOptionalAction) and isinstance(default, bool):
            # "--semantic, --no-semantic ... (default: on)", not argparse's "(default: True)"
            text = text.replace(" (default: %(default)s)", "")
            return f"{text} (default: {'on' if default else 'off'})"
        if (
            not text
            or "default" in text
            or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return action.help
        return text + " (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse would sys.exit; we return 2
        command = self.prog.removeprefix("autofeedback").strip()
        message += self._did_you_mean(message)
        raise _Usage(f"{command}: {message}" if command else message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and " " in self.prog:
            # a command's stray arguments are reported by that command's parser, which knows
            # the options to suggest (argparse reports them from the top, suggesting none)
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _did_you_mean(self, message: str) -> str:
        """``" (did you mean --spec?)"`` for a misspelt option or choice; ``""`` when
        nothing is close. argparse suggests nothing before Python 3.14."""
        import difflib

        if message.startswith("unrecognized arguments:"):
            known = [o for a in self._actions for o in a.option_strings]
            words = message.split(":", 1)[1].split()
            flags = [w.split("=", 1)[0] for w in words if w.startswith("-") and w != "-"]
            hints = []
            for flag in flags:
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
                if close:
                    hints.append(close[0] if len(flags) == 1 else f"{close[0]} for {flag}")
            return f" (did you mean {', '.join(hints)}?)" if hints else ""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2)) or choice.group(2).split(", ")
            close = difflib.get_close_matches(choice.group(1), options, n=1, cutoff=0.6)
            return f"; did you mean {close[0]!r}?" if close else ""
        return ""


def _version() -> str:
    # the package's own attribute, which setup.cfg reads as the distribution's version:
    # importlib.metadata would import the email parser and scan the installed
    # distributions, the larger part of `autofeedback --version`
    from autofeedback import __version__

    return __version__


def _parser(config: Mapping[str, Any] | None = None) -> argparse.ArgumentParser:
    doc = (__doc__ or "").split("\n\n")[0].replace("\n", " ")
    p = _Parser(
        prog="autofeedback",
        description=doc,
        epilog=_EPILOG.format(keys=", ".join(sorted(_CONFIG_KEYS))),
    )
    p.add_argument("--version", action="version", version=f"autofeedback {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    s = sub.add_parser(
        "scan",
        help="check one LLM output against a spec",
        description="Check one LLM output (any supported request format) against a spec and "
        "print the findings and the feedback text for the model.",
        epilog=f"""{_EXIT_CODES}

examples:
  autofeedback scan --spec api.yaml "GET /books?query=dune&limit=ten"
  autofeedback scan --spec api.yaml --instruction "Find science books" output.txt
  llm-command | autofeedback scan --spec api.yaml --format json -""",
    )
    s.add_argument("--spec", action="append", help="spec file (repeatable; required)")
    s.add_argument("--instruction", help="the user instruction, for the E2.1 selection check")
    s.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    s.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    s.add_argument(
        "output",
        nargs="?",
        default="-",
        help="a file holding the LLM output, the output text itself, or - (stdin)",
    )

    a = sub.add_parser(
        "audit",
        help="audit a log: JSONL records, HAR, or chat logs of OpenAI (Chat Completions, "
        "Responses), Anthropic, Gemini and Bedrock",
        description="Check every record of a log and write a report. The log is JSONL "
        "records (LLM outputs, calls, HTTP requests or sequences), a HAR capture, or a chat "
        "log of OpenAI Chat Completions or Responses, Anthropic Messages, Gemini or Bedrock "
        "Converse. Blank lines are skipped; a line that is not a record is reported as bad "
        "input and the audit goes on.",
        epilog=f"""{_EXIT_CODES}

examples:
  autofeedback audit specs/examples/requests.jsonl --spec specs/examples/bookshop.yaml
  autofeedback audit capture.har --spec api.yaml --format html -o report.html
  autofeedback audit big.jsonl --spec api.yaml --format sarif -o audit.sarif --engine dask""",
    )
    a.add_argument("log", help="log file, or - for stdin")
    a.add_argument(
        "--spec",
        action="append",
        help="spec file (repeatable; optional when every record carries its own tools)",
    )
    a.add_argument(
        "--input-format",
        choices=["auto", "jsonl", "har", "har-session", "chat", "openai"],
        default="auto",
        help="how to read the log. auto: by extension, then by content; jsonl: one record "
        "per line ({output | call | request | steps | messages}); har: a HAR capture, each "
        "request on its own; har-session: a HAR capture checked as one sequence, each "
        "response grounding later requests; chat (or openai): one model request and "
        "response per line, from OpenAI Chat Completions or Responses, Anthropic Messages, "
        "Gemini or Bedrock Converse ({request, response}, {body} wrappers, Batch API output, "
        "or a bare response)",
    )
    a.add_argument(
        "--format",
        choices=["text", "json", "jsonl", "junit", "sarif", "html"],
        default="text",
        help="report format",
    )
    a.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    a.add_argument("--no-semantic", action="store_true", help="structural checks only, no model")
    a.add_argument(
        "--fix",
        action="store_true",
        help="also repair what the docs leave one answer for: each report line of a "
        "repaired record gains 'repaired' (its call written again, in its own shape) and "
        "'repairs' ({code, location, before, after})",
    )
    a.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )
    a.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="dask: audit partitions of a big line-based log in parallel (same report)",
    )
    a.add_argument(
        "--dask-scheduler",
        type=_dask_scheduler,
        default="processes",
        metavar="{processes,threads,synchronous,local-cluster,tcp://HOST:PORT}",
        help="where the partitions run: a local Dask scheduler, a dask.distributed "
        "LocalCluster of worker processes on 127.0.0.1, or a running cluster's scheduler",
    )
    a.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        help="seconds to reach a dask.distributed scheduler",
    )
    a.add_argument(
        "--workers",
        "--dask-workers",
        dest="workers",
        type=int,
        help="Dask workers, or local-cluster processes (default: CPU count; "
        "a tcp:// cluster uses its own)",
    )
    a.add_argument("--partition-mb", type=float, help="Dask partition size in MiB")

    sb = sub.add_parser(
        "sandbox",
        help="serve a spec on 127.0.0.1, validating every request",
        description="Serve a spec as a validating mock API: valid requests are answered "
        "consistently within a session (one store per collection: lists page through it, "
        "details read it, creates, updates and deletes change it; values satisfy their "
        "schemas), invalid ones get a documented error. What the spec gives no way to know "
        "(a list with no id field its detail takes) is said once at start-up.",
        epilog="""examples:
  autofeedback sandbox --spec specs/examples/bookshop.yaml            # 127.0.0.1:8080
  autofeedback sandbox --spec specs/examples/calendar.yaml            # 127.0.0.1:8090
  autofeedback sandbox --spec api.yaml --port 9000 --terse""",
    )
    sb.add_argument("--spec", help="spec file (required)")
    sb.add_argument(
        "--port", type=int, help="port (default: the spec's loopback server port, or 8080)"
    )
    _host_arguments(sb, "the sandbox")
    sb.add_argument(
        "--terse",
        action="store_true",
        help="answer invalid requests with only a status and a machine code",
    )
    sb.add_argument(
        "--seed",
        type=int,
        default=0,
        help="varies generated bodies and created ids; same seed, same answers (default 0)",
    )
    _grace_argument(sb)

    ix = sub.add_parser("index", help="the RAG index over a spec's documentation")
    ix_sub = ix.add_subparsers(dest="index_command", required=True, parser_class=_Parser)
    ib = ix_sub.add_parser(
        "build",
        help="build (or reuse, when the spec is unchanged) an index",
        description="Chunk a spec's documentation (and extra Markdown) into a FAISS index "
        "saved in a folder; `autofeedback run --index DIR` reads it.",
        epilog="""examples:
  autofeedback index build --spec api.yaml --docs docs/ --index api-index/""",
    )
    ib.add_argument("--spec", help="spec file (required)")
    ib.add_argument(
        "--docs",
        action="append",
        default=[],
        help="a Markdown/text file or folder of extra docs (repeatable)",
    )
    ib.add_argument(
        "--index",
        metavar="DIR",
        help="index folder, the one `run --index` reads (required)",
    )
    # -o is a report FILE elsewhere; kept here, hidden, for scripts written before --index
    ib.add_argument("-o", "--output", help=argparse.SUPPRESS)
    ib.add_argument("--embedder", help="embedding model name or local model directory")

    fl = sub.add_parser("flow", help="where each parameter's value comes from (the data flow)")
    fl.add_argument("--spec", required=True, action="append", help="spec file (repeatable)")
    fl.add_argument("operation", nargs="?", help="show only this operation (name or 'GET /path')")
    fl.add_argument("--format", choices=["text", "json"], default="text")
    fl.add_argument("--links", help="overrides, JSON/YAML: {OPERATION: {param: 'OP:path' | null}}")
    fl.add_argument(
        "--responses", help="response schemas: GraphQL SDL or JSON {function: JSON Schema}"
    )
    fl.add_argument("--top", type=int, default=3, help="producers shown per parameter")

    r = sub.add_parser(
        "run",
        help="ask an LLM, check, send, explain, retry (the loop)",
        description="Run the feedback loop: the model writes a request, the static scanner "
        "checks it, a clean request is sent, a failed response is explained from the docs, "
        "and the model tries again, within the budgets.",
        epilog="""exit codes:
  0  the requirement was met (a documented 2xx)
  1  the loop stopped without meeting it
  2  bad input: a broken spec, bad options, an LLM or API server that cannot be reached

--llm forms:
  local                  the embedded model that is installed (1.5B before 0.5B)
  local:0.5b, local:1.5b one of the shipped Qwen2.5-Coder GGUF models
  local:OWNER/REPO       a Hugging Face GGUF repo, through huggingface_hub's cache
  http://HOST:PORT/v1    an OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp's
                         server); the model from --model or AUTOFEEDBACK_MODEL
  replay:FILE            recorded outputs separated by '---' lines (no model)

examples:
  autofeedback run --spec api.yaml --instruction "Find science books" --llm local:1.5b
  autofeedback run --spec api.yaml --instruction "..." --llm http://127.0.0.1:8000/v1 \\
      --model qwen2.5-coder --base-url http://127.0.0.1:8080 --trace trace.jsonl
  autofeedback run --mode react --spec api.yaml --instruction "Who wrote Dune?" \\
      --llm local:1.5b        (a multi-step task; exit 0 when the model gave a final
                              answer, or with --mode program when the program is clean)""",
    )
    r.add_argument("--spec", help="spec file (required)")
    r.add_argument("--instruction", help="what the user asks for (required)")
    r.add_argument(
        "--llm",
        default="local",
        help="the model: local, local:1.5b, local:OWNER/REPO, an OpenAI-compatible base "
        "URL, or replay:FILE (see below)",
    )
    r.add_argument(
        "--model",
        help="model name for an OpenAI-compatible endpoint (default: $AUTOFEEDBACK_MODEL)",
    )
    r.add_argument("--base-url", help="where to send requests (default: the spec's server)")
    r.add_argument(
        "--allow-host", action="append", default=[], help="extra allowed host (repeatable)"
    )
    r.add_argument("--max-static", type=int, default=3, help="rounds of static feedback")
    r.add_argument("--max-dynamic", type=int, default=2, help="rounds of dynamic feedback")
    r.add_argument("--token-budget", type=int, help="stop after this many tokens (default: none)")
    r.add_argument("--timeout", type=float, default=10.0, help="seconds per HTTP request")
    r.add_argument(
        "--progress",
        choices=["auto", "always", "never"],
        default="auto",
        help="say on stderr while the model loads and writes (auto: when stderr is a terminal)",
    )
    r.add_argument("--index", help="doc index directory (built there if missing or stale)")
    r.add_argument("--trace", help="append a JSONL trace of every attempt (credentials redacted)")
    on_off = argparse.BooleanOptionalAction
    r.add_argument("--static", action=on_off, default=None, help="static feedback (default on)")
    r.add_argument("--dynamic", action=on_off, default=None, help="dynamic feedback (default on)")
    r.add_argument(
        "--gate",
        action=on_off,
        default=None,
        help="never send a request with E1-E3 findings (default on); --no-gate sends every "
        "parsed request, for servers that explain their own errors",
    )
    r.add_argument(
        "--retrieve-docs",
        action=on_off,
        default=None,
        help="explain a failed response from the docs (default on)",
    )
    r.add_argument(
        "--corrected-call",
        action=on_off,
        default=None,
        dest="skeleton",
        help="end static feedback with the request every named fix applied (default off)",
    )
    r.add_argument(
        "--focus-docs",
        action=on_off,
        default=None,
        help="document only the APIs in question in a retry's prompt (default on)",
    )
    r.add_argument(
        "--repeat-retries",
        type=int,
        help="times a repeated failed request gets its feedback restated before stopping "
        "(default: 0)",
    )
    r.add_argument(
        "--constrain",
        action=on_off,
        default=None,
        help="grammar-constrained decoding: the model can only write calls to documented "
        "APIs with documented parameters (off by default: with the checks it repaired "
        "the most tasks where every tool is in the spec, but it cannot reach a tool found "
        "at run time, and in --mode program a small model fills in optional parameters "
        "the task does not need; an OpenAI-compatible server needs structured outputs)",
    )
    r.add_argument(
        "--mode",
        choices=["single", "program", "react"],
        default="single",
        help="single: one request, the loop above (default); program: the model writes the "
        "whole multi-step program, checked (E1-E5) and fed back, never executed; react: one "
        "call at a time against the API, each checked against the calls so far before it is "
        "sent, until the model gives a final answer",
    )
    r.add_argument(
        "--max-steps", type=int, default=8, help="--mode react: most calls sent (default 8)"
    )
    _repair_flag(r)
    m = _mcp_proxy_parser(sub)
    px = _proxy_parser(sub)
    _configure(
        {"scan": s, "audit": a, "sandbox": sb, "build": ib, "run": r, "mcp-proxy": m, "proxy": px},
        config or {},
    )
    return p


#: :data:`autofeedback.decide.REPAIR_MODES`, named here so that building the parser
#: (``--version``, ``--help``) does not import the decision and the checks behind it;
#: tests/test_cli.py holds the two equal
_REPAIR_MODES = ("sure", "off")


def _repair_flag(parser: argparse.ArgumentParser) -> None:
    """``--repair``, the same on every command that decides what happens to a call."""
    parser.add_argument(
        "--repair",
        choices=_REPAIR_MODES,
        default="sure",
        help="sure: repair what the docs leave one answer for (a name spelled another way, "
        "'3' for an integer, a parameter the API does not take) instead of asking the model "
        "again, each repair shown; off: every error goes back to the model (default sure)",
    )


#: ``run`` flags passed to FeedbackLoop only when given, so its defaults stay the defaults
_LOOP_OPTIONS = (
    "static",
    "dynamic",
    "gate",
    "retrieve_docs",
    "skeleton",
    "focus_docs",
    "repeat_retries",
    "constrain",
)


def _dask_scheduler(name: str) -> str:
    from autofeedback.audit._engines import check_scheduler

    try:
        return check_scheduler(name)
    except AutoFeedbackError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: ``[tool.autofeedback]`` keys -> (argparse dest, expected type, the commands using it);
#: paths are relative to the pyproject.toml that names them
_CONFIG_KEYS: dict[str, tuple[str, type, tuple[str, ...]]] = {
    "spec": ("spec", list, ("scan", "audit", "sandbox", "run", "build")),
    "llm": ("llm", str, ("run",)),
    "model": ("model", str, ("run",)),
    "base-url": ("base_url", str, ("run",)),
    "index": ("index", str, ("run", "build")),
    "max-static": ("max_static", int, ("run",)),
    "max-dynamic": ("max_dynamic", int, ("run",)),
    "timeout": ("timeout", float, ("run",)),
    "semantic": ("no_semantic", bool, ("scan", "audit")),
    "repair": ("repair", str, ("run", "proxy", "mcp-proxy")),
}
_PATH_KEYS = ("spec", "index")


def find_config(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The ``[tool.autofeedback]`` table of the nearest ``pyproject.toml`` from ``start``
    (default: the current folder) upwards, or None when no pyproject.toml has one.

    >>> find_config(Path("/"))  # doctest: +SKIP
    """
    if sys.version_info >= (3, 11):  # noqa: UP036 - setup.cfg still allows 3.10
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise _Usage(f"{candidate}: {exc}") from None
        table = data.get("tool", {}).get("autofeedback")
        if table is None:
            continue
        if not isinstance(table, dict):
            raise _Usage(f"{candidate}: [tool.autofeedback] must be a table")
        return candidate, table
    return None


def _config_values(found: tuple[Path, dict[str, Any]] | None) -> dict[str, Any]:
    """``[tool.autofeedback]`` as argparse dests, each value checked."""
    if found is None:
        return {}
    path, table = found
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _CONFIG_KEYS:
            known = ", ".join(sorted(_CONFIG_KEYS))
            raise _Usage(f"{path}: [tool.autofeedback] has no key {key!r}; known: {known}")
        dest, kind, _ = _CONFIG_KEYS[key]
        if kind is list and isinstance(value, str):
            value = [value]
        if kind is list:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if key == "repair" and ok and value not in ("sure", "off"):
            ok = False
        if not ok:
            shown = "a list of strings" if kind is list else f"a {kind.__name__}"
            if key == "repair":
                shown = "'sure' or 'off'"
            raise _Usage(f"{path}: [tool.autofeedback] {key} must be {shown}")
        if key in _PATH_KEYS:
            value = (
                [str(path.parent / v) for v in value] if kind is list else str(path.parent / value)
            )
        values[dest] = (not value) if key == "semantic" else value
    return values


def _configure(parsers: Mapping[str, argparse.ArgumentParser], values: Mapping[str, Any]) -> None:
    """Configuration as each command's defaults, so a flag on the command line wins.
    ``spec`` is filled after parsing instead: it appends, and would add to the default."""
    for key, (dest, _, commands) in _CONFIG_KEYS.items():
        if dest in values and key != "spec":
            for name in commands:
                parsers[name].set_defaults(**{dest: values[dest]})


def _require(args: argparse.Namespace, *names: str) -> None:
    """argparse's ``required=True``, checked after configuration filled what it could."""
    missing = [n for n in names if not getattr(args, n)]
    if missing:
        flags = ", ".join("--" + n.replace("_", "-") for n in missing)
        hint = " (or set it in [tool.autofeedback] in pyproject.toml)" if "spec" in missing else ""
        raise _Usage(f"{args.command}: the following arguments are required: {flags}{hint}")


def _load_specs(paths: Sequence[str]) -> ApiCatalog | None:
    from autofeedback._catalog import ApiCatalog

    if not paths:
        return None
    catalogs = [ApiCatalog.from_file(p) for p in paths]
    return catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)


def run(
    argv: Sequence[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """Run the CLI; returns the exit code (0 clean, 1 findings, 2 bad input).

    >>> run(["--version"])  # doctest: +SKIP
    autofeedback 0.1.0
    0
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    inp = stdin if stdin is not None else sys.stdin
    argv = list(argv) if argv is not None else sys.argv[1:]
    with warnings.catch_warnings():
        # a spec that loads but means less than its author thinks: one line, said once
        warnings.simplefilter("once", SpecWarning)

        def show(message: Warning | str, *_: Any, **__: Any) -> None:
            err.write(f"autofeedback: warning: {message}\n")

        warnings.showwarning = show
        return _run(argv, out, err, inp)


def _run(argv: list[str], out: IO[str], err: IO[str], inp: IO[str]) -> int:
    try:
        config = _config_values(find_config())
        parser = _parser(config)
        try:
            # --help and --version print to sys.stdout and exit: keep both in-process
            with contextlib.redirect_stdout(out):
                args = parser.parse_args(argv)
        except SystemExit as stop:
            return stop.code if isinstance(stop.code, int) else 0
        if getattr(args, "spec", ()) is None:
            args.spec = config.get("spec")
        if args.command == "scan":
            _require(args, "spec")
            return _scan(args, out, inp)
        if args.command == "audit":
            return _audit(args, out, err, inp)
        if args.command == "sandbox":
            from autofeedback._sandbox import run_sandbox

            _require(args, "spec")
            return run_sandbox(
                args.spec,
                host=args.host,
                port=args.port,
                terse=args.terse,
                seed=args.seed,
                allow_remote=args.allow_remote,
                grace=args.shutdown_grace,
                stdout=out,
                stderr=err,
            )
        if args.command == "index":
            args.index = args.index or args.output
            _require(args, "spec", "index")
            return _index(args, out)
        if args.command == "run":
            _require(args, "spec", "instruction")
            if args.mode != "single":
                return _run_task(args, out, err)
            return _run_loop(args, out, err)
        if args.command == "flow":
            return _flow(args, out)
        if args.command == "mcp-proxy":
            return _mcp_proxy(args, err)
        if args.command == "proxy":
            return _proxy(args, out, err)
        raise _Usage(f"unknown command {args.command!r}")  # pragma: no cover
    except _Usage as exc:
        err.write(f"{_ERROR}{exc}\n")
        return 2
    except AutoFeedbackError as exc:
        err.write(f"{_ERROR}{exc}\n")
        return 2
    except BrokenPipeError:
        raise  # the reader left (| head): main() ends quietly
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        err.write(f"{_ERROR}{where}{exc.strerror or exc}\n")
        return 2


def main() -> None:
    """The console script: exits with :func:`run`'s code.

    ``autofeedback audit log.jsonl --spec api.yaml | head`` ends quietly when ``head``
    stops reading, as ``cat`` does: exit 141 (128 + SIGPIPE), nothing on stderr.
    """
    try:
        code = run()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit and would print "Exception ignored ...":
        # point it at devnull first (the recipe of the Python docs, "Note on SIGPIPE")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(128 + 13)
    sys.exit(code)


# -- scan ---------------------------------------------------------------------------


#: one token that names a file rather than holding a request: ``out.txt``, ``logs/x``
_PATHLIKE = re.compile(r"[\w~.-]*(?:/[\w~.-]+)+/?|[\w~-][\w~.-]*\.[A-Za-z][A-Za-z0-9]{0,4}")


def _read_output(arg: str, inp: IO[str]) -> str:
    if arg == "-":
        return inp.read()
    path = Path(arg)
    try:
        if len(arg) < 4096 and path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    if _PATHLIKE.fullmatch(arg):
        # a mistyped file name would otherwise be scanned as the model's output
        raise _Usage(f"scan: no such file: {arg} (to scan text, pass the text or - for stdin)")
    return arg


def _scan(args: argparse.Namespace, out: IO[str], inp: IO[str]) -> int:
    from autofeedback._scan import Scanner, first_finding
    from autofeedback.decide._feedback import render_feedback

    catalog = _load_specs(args.spec)
    assert catalog is not None
    text = _read_output(args.output, inp)
    scanner = Scanner(catalog, retriever=None if args.no_semantic else "auto")
    findings = list(scanner.iter_findings(text, instruction=args.instruction))
    errors = [f for f in findings if f.severity == "error"]
    first = first_finding(findings)
    ordered = ([first] if first else []) + [f for f in findings if f is not first]
    feedback = render_feedback(ordered) if ordered else None
    if args.format == "json":
        json.dump(
            {"ok": not errors, "findings": [f.as_dict() for f in findings], "feedback": feedback},
            out,
            indent=2,
        )
        out.write("\n")
    elif not findings:
        out.write("ok: no findings\n")
    else:
        for f in findings:
            out.write(f"{f.severity}: {f}\n")
        out.write("\n" + (feedback or "") + "\n")
    return 1 if errors else 0


# -- audit --------------------------------------------------------------------------


class _Sink(Protocol):
    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


class _Formatter:
    def __init__(self, out: IO[str], source: str = "-") -> None:
        self.out = out
        self.source = source

    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


class _JsonlFormatter(_Formatter):
    def record(self, result: AuditResult) -> None:
        self.out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")


class _JsonFormatter(_Formatter):
    def __init__(self, out: IO[str], source: str = "-") -> None:
        super().__init__(out, source)
        self.results: list[dict[str, Any]] = []

    def record(self, result: AuditResult) -> None:
        self.results.append(result.as_dict())

    def finish(self, summary: AuditSummary) -> None:
        json.dump(
            {
                "records": self.results,
                "summary": {
                    "records": summary.records,
                    "clean": summary.clean,
                    "bad_lines": summary.bad_lines,
                    "by_code": dict(summary.by_code),
                    "warnings_by_code": dict(summary.warnings_by_code),
                    "by_operation": dict(summary.by_operation),
                },
            },
            self.out,
            indent=2,
            ensure_ascii=False,
        )
        self.out.write("\n")


class _TextFormatter(_Formatter):
    max_operations = 50

    def record(self, result: AuditResult) -> None:
        if result.error is not None:
            self.out.write(f"[{result.id}] bad input (line {result.line}): {result.error}\n")
            return
        if not result.findings:
            return
        status = "ok" if result.ok else "FAIL"
        self.out.write(f"[{result.id}] {status}\n")
        for f in result.findings:
            self.out.write(f"  {f.severity}: {f}\n")
        if result.repairs:
            shown = result.repaired
            if not isinstance(shown, str):
                shown = json.dumps(shown, ensure_ascii=False, default=str)
            self.out.write(f"  repaired: {shown[:500]}\n")

    def finish(self, summary: AuditSummary) -> None:
        self.out.write(f"\n{summary.headline()}\n")
        rows = summary.severity_rows()
        if rows:
            width = max(len(t) for _, t, _, _ in rows)
            self.out.write(f"\n{'code':<6} {'error type':<{width}} {'errors':>6} {'warnings':>8}\n")
            for code, title, errors, warnings in rows:
                self.out.write(f"{code:<6} {title:<{width}} {errors:>6} {warnings:>8}\n")
        ops = summary.operation_rows()
        if ops:
            shown = ops[: self.max_operations]
            width = max(len("operation"), *(len(op) for op, _, _ in shown))
            self.out.write(f"\n{'operation':<{width}} {'count':>6}  codes\n")
            for op, count, codes in shown:
                self.out.write(f"{op:<{width}} {count:>6}  {codes}\n")
            if len(ops) > len(shown):
                self.out.write(f"... and {len(ops) - len(shown)} more operations\n")


def _report(name: str) -> Callable[[IO[str], str], _Sink]:
    def make(out: IO[str], source: str) -> _Sink:
        from autofeedback.audit import _reports

        cls: Callable[[IO[str], str], _Sink] = getattr(_reports, name)
        return cls(out, source)

    return make


_FORMATTERS: dict[str, Callable[[IO[str], str], _Sink]] = {
    "text": _TextFormatter,
    "json": _JsonFormatter,
    "jsonl": _JsonlFormatter,
    "junit": _report("JunitReport"),
    "sarif": _report("SarifReport"),
    "html": _report("HtmlReport"),
}

_SNIFF = 64 * 1024


class _Rewound:
    """stdin with the lines read for sniffing put back in front."""

    def __init__(self, head: list[str], rest: IO[str]) -> None:
        self.head = "".join(head)
        self.lines = head
        self.rest = rest

    def __iter__(self) -> Iterator[str]:
        lines, self.lines, self.head = self.lines, [], ""
        yield from lines
        yield from self.rest

    def read(self, size: int = -1) -> str:
        if self.head:
            head, self.head, self.lines = self.head, "", []
            return head
        return self.rest.read(size)


def _head_lines(stream: IO[str]) -> list[str]:
    """The first lines of a stream that cannot be rewound, up to :data:`_SNIFF`
    characters (read once, then handed on with the rest: :class:`_Rewound`)."""
    head: list[str] = []
    while sum(map(len, head)) < _SNIFF:
        line = stream.readline()
        if not line:
            break
        head.append(line.removeprefix("\ufeff") if not head else line)
    return head


#: what a file that is no text log starts with
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data", "zcat"),
    (b"BZh", "bzip2-compressed data", "bzcat"),
    (b"\xfd7zXZ\x00", "xz-compressed data", "xzcat"),
    (b"(\xb5/\xfd", "zstd-compressed data", "zstdcat"),
    (b"PK\x03\x04", "a zip archive", None),
)


def _not_text(path: str, head: str | bytes) -> str | None:
    """Why a log whose first bytes (or characters, read with errors replaced) are
    ``head`` is no text log, in one line; ``None`` for text. A compressed file is named
    with the command that reads it; a file whose start is mostly bytes that are no UTF-8
    text, or control characters, is binary. A few bad bytes in a text log are those
    records' errors, as before."""
    raw = head
    if isinstance(head, str):  # stdin: its bytes as the stream decoded them
        try:
            raw = head.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = head.encode("utf-8", "replace")
    assert isinstance(raw, bytes)
    for magic, what, reader in _MAGIC:
        if raw.startswith(magic):
            how = ": extract the log first"
            if reader is not None:
                piped = f"... | {reader}" if path == "stdin" else f"{reader} {path}"
                how = f": decompress it first (`{piped} | autofeedback audit - ...`)"
            return f"{path} is {what}, not a text log{how}"
    text = raw.decode("utf-8", errors="replace") if raw else ""
    if not text:
        return None
    bad = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f"))
    if bad * 10 > len(text):  # one character in ten or more: not a log of text
        return f"{path} is not UTF-8 text (binary data): not a log autofeedback reads"
    return None


def _lines(path: str, inp: IO[str]) -> tuple[Any, str, int | None, Any]:
    """(stream, its first characters, size in bytes or None, file handle to close).

    A file is read as a stream: a pipe or a process substitution (``/dev/stdin``,
    ``<(zcat log.gz)``) as well as a regular file. A file that is no text (compressed,
    binary) is refused in one line (:class:`_Usage`), not read as thousands of bad
    records."""
    where = "stdin" if path == "-" else path
    if path == "-":
        reconfigure = getattr(inp, "reconfigure", None)
        if reconfigure is not None:  # sys.stdin: lines end at "\n" only, as in a file
            with contextlib.suppress(ValueError, OSError):
                reconfigure(newline="\n")
        head = _head_lines(inp)
        why = _not_text(where, "".join(head)[:_SNIFF])
        if why is not None:
            raise _Usage(f"audit: {why}")
        return _Rewound(head, inp), "".join(head), None, None
    raw = io.BufferedReader(io.FileIO(path, "r"), buffer_size=_SNIFF)
    try:
        why = _not_text(where, raw.peek(_SNIFF)[:_SNIFF])
        if why is not None:
            raise _Usage(f"audit: {why}")
        # only "\n" ends a record (a bare "\r" inside one must not split it, nor shift
        # the line numbers after it); a UTF-8 BOM before the first record is not part of it
        handle = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="\n")
    except BaseException:
        raw.close()
        raise
    if raw.seekable():
        start = handle.read(_SNIFF)
        handle.seek(0)
        return handle, start, os.path.getsize(path), handle
    # a pipe: its start is read once and handed on with the rest
    head = _head_lines(handle)
    return _Rewound(head, handle), "".join(head), None, handle


#: records an audit of a file reads ahead (see ``audit_lines``)
_LOOKAHEAD = 64


def _audit(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    from autofeedback.audit._audit import NO_SPEC, AuditSummary, audit_lines, audit_units
    from autofeedback.audit._inputs import read_har, read_openai, sniff_format

    catalog = _load_specs(args.spec or ())
    retriever = None if args.no_semantic else "auto"
    if args.engine == "dask" and args.input_format == "har-session":
        raise _Usage("autofeedback audit: a HAR session is one sequence; use --engine local")
    if args.engine == "dask" and args.log == "-":
        raise _Usage("audit: --engine dask needs a log file, not stdin")
    if args.engine == "dask" and os.path.exists(args.log) and not os.path.isfile(args.log):
        raise _Usage(
            f"audit: --engine dask splits a regular file; {args.log} is a stream: "
            "use --engine local"
        )
    if args.workers is not None and args.workers < 1:
        raise _Usage("audit: --workers must be at least 1")
    if args.output:
        for kept, what in [
            (args.log, "the log being audited"),
            *((p, "a spec") for p in args.spec or ()),
        ]:
            if kept != "-" and _same_file(args.output, kept):
                # opening it for the report would empty it before a line was read
                raise _Usage(
                    f"audit: -o {args.output} is {what}; writing the report there would "
                    "destroy it: choose another report file"
                )
    stream, head, size, handle = _lines(args.log, inp)
    fmt = "openai" if args.input_format == "chat" else args.input_format
    if fmt == "auto":
        fmt = sniff_format(args.log, head)
    done = [0]  # bytes the dask engine has finished, for progress
    results: Iterator[AuditResult]
    try:
        if args.engine == "dask":
            from autofeedback.audit._engines import audit_file_dask

            results = audit_file_dask(
                args.log,
                catalog,
                input_format=fmt,
                retriever=retriever,
                scheduler=args.dask_scheduler,
                workers=args.workers,
                partition_bytes=int(args.partition_mb * 2**20) if args.partition_mb else None,
                on_partition=lambda n: done.__setitem__(0, done[0] + n),
                timeout=args.dask_timeout,
                fix=args.fix,
            )
            position: Callable[[], int] | None = lambda: done[0]  # noqa: E731
        else:
            if fmt == "har-session":
                from autofeedback.audit._inputs import read_har_session

                results = audit_units(
                    read_har_session(stream), catalog, retriever=retriever, fix=args.fix
                )
            elif fmt == "har":
                results = audit_units(read_har(stream), catalog, retriever=retriever, fix=args.fix)
            elif fmt == "openai":
                results = audit_units(
                    read_openai(stream), catalog, retriever=retriever, fix=args.fix
                )
            else:
                # a file is read ahead so that the names records compare are embedded in
                # batches; standard input is answered line by line (it may be live)
                ahead = _LOOKAHEAD if args.log != "-" else 0
                results = audit_lines(
                    stream, catalog, retriever=retriever, lookahead=ahead, fix=args.fix
                )
            position = _position(handle)
        # a lone surrogate from a log must not stop the report: it is written escaped
        target = (
            open(args.output, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            if args.output
            else out
        )
        try:
            summary = AuditSummary()
            formatter = _FORMATTERS[args.format](target, args.log)
            if hasattr(formatter, "specs"):  # the HTML report names the specs it checked
                formatter.specs = tuple(args.spec or ())
            show = args.progress == "always" or (args.progress == "auto" and err.isatty())
            if show:
                results = _with_progress(results, position, size, err)
            checked = False  # has any record been checked against its own tools?
            for result in results:
                checked = checked or result.error is None
                if catalog is None and not checked and result.error and NO_SPEC in result.error:
                    # a missing option, not a bad record: said once, not once per record
                    # (in a log whose records carry their tools, one without is its error)
                    raise _Usage(
                        f"audit: record {result.id} (line {result.line}) has no 'tools' and "
                        "no --spec was given: pass --spec SPEC, or give every record its tools"
                    )
                result = _reported(formatter, result)
                summary.add(result)
            formatter.finish(summary)
        finally:
            if args.output:
                target.close()
    finally:
        if handle is not None:
            handle.close()
    if args.output:
        # with -o, stdout is free: one line says what was written where
        out.write(f"wrote {args.format} report to {args.output}: {summary.headline()}\n")
    if summary.records == 0:
        # nothing was checked, so nothing is clean: an empty file is a wrong path, a
        # failed export or a pipe that broke, and exit 0 would pass it as a clean log
        where = "stdin" if args.log == "-" else args.log
        err.write(
            f"{_ERROR}audit: {where} holds no records (it is empty or blank): nothing was checked\n"
        )
        return 2
    return summary.exit_code


def _final_text(result: Any) -> str:
    """The final request as it was sent: the model's last text with the repairs written
    in (the request keeps the model's own text as ``raw``), as the trace holds it."""
    request = result.request
    text = request.raw or str(request)
    last = result.attempts[-1] if result.attempts else None
    if last is None or not last.repairs or last.request is None or last.request == request:
        return str(text)
    from autofeedback.decide._render import rewrite_output

    original = last.request
    return rewrite_output(original.raw or last.output, [(original, request)]) or str(request)


def _same_file(a: str, b: str) -> bool:
    """Whether the paths name one file (a link, ``./x`` and ``x`` included)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet): not the same file
        return False


def _reported(formatter: _Sink, result: AuditResult) -> AuditResult:
    """Write ``result``; a result the formatter cannot write (an unencodable character
    on a strict stdout...) is written as that record's one-line error instead."""
    try:
        formatter.record(result)
        return result
    except Exception as exc:
        from autofeedback._scan import one_line
        from autofeedback.audit._audit import AuditResult

        reason = one_line(exc).encode("ascii", "backslashreplace").decode("ascii")
        failed = AuditResult(
            result.id if isinstance(result.id, (int, float)) else result.line,
            False,
            error=f"the record could not be reported: {reason}",
            line=result.line,
        )
        formatter.record(failed)
        return failed


def _position(handle: Any) -> Callable[[], int] | None:
    """Bytes read so far from a text file (its buffer's offset: the text layer cannot
    tell() while being iterated)."""
    if handle is None:
        return None

    def tell() -> int:
        try:
            return int(handle.buffer.tell())
        except (OSError, AttributeError, ValueError):
            return 0

    return tell


def _with_progress(
    results: Iterator[AuditResult],
    position: Callable[[], int] | None,
    size: int | None,
    err: IO[str],
) -> Iterator[AuditResult]:
    """A rich progress bar on stderr: bytes with rate and ETA when the size is known,
    else a running count of records with their rate."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        ProgressColumn,
        Task,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.text import Text

    class _Records(ProgressColumn):
        def render(self, task: Task) -> Text:
            n = task.fields.get("records", 0)
            if task.total is not None:  # the byte columns already show rate and ETA
                return Text(f"{n} records")
            speed = n / task.elapsed if task.elapsed else 0.0
            return Text(f"{n} records ({speed:,.0f}/s)")

    by_bytes = bool(size) and position is not None
    columns: list[ProgressColumn] = [TextColumn("auditing")]
    if by_bytes:
        columns += [
            BarColumn(),
            TaskProgressColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        ]
    else:
        columns += [TimeElapsedColumn()]
    columns.append(_Records())
    console = Console(file=err)
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("audit", total=size if by_bytes else None, records=0)
        last = 0.0
        for done, result in enumerate(results, start=1):
            now = time.monotonic()
            if now - last > 0.1:  # rich redraws at 10 Hz itself; update no faster
                last = now
                fields: dict[str, Any] = {"records": done}
                if by_bytes and position is not None:
                    fields["completed"] = position()
                progress.update(task, **fields)
            yield result
        progress.update(task, completed=size if by_bytes else None, records=done if last else 0)


# -- index / run ------------------------------------------------------------------


def _doc_paths(items: Sequence[str]) -> list[Path]:
    paths: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            paths += sorted(x for x in p.rglob("*") if x.suffix.lower() in (".md", ".txt", ".rst"))
        elif p.is_file():
            paths.append(p)
        else:
            raise _Usage(f"index build: no such file or folder: {item}")
    return paths


def _index(args: argparse.Namespace, out: IO[str]) -> int:
    from autofeedback._catalog import ApiCatalog
    from doc_index import build_or_load
    from retriever import load_embedder

    catalog = ApiCatalog.from_file(args.spec)
    embedder = load_embedder(args.embedder) if args.embedder else None
    index = build_or_load(catalog, Path(args.index), embedder, _doc_paths(args.docs))
    out.write(f"index of {args.spec} in {args.index}: {len(index)} chunks\n")
    return 0


def _run_llm(args: argparse.Namespace, err: IO[str]) -> tuple[bool, Any]:
    """``run``'s model from ``--llm`` (``replay:FILE``, a URL, a local or Hugging Face
    model), and whether to show progress on stderr while it loads and writes."""
    from autofeedback.loop._llm import load_llm
    from autofeedback.loop._replay import ReplayLLM

    show = args.progress == "always" or (args.progress == "auto" and err.isatty())
    if args.llm.startswith("replay:"):
        return show, ReplayLLM.from_file(args.llm.removeprefix("replay:"))
    remote = args.llm.startswith(("http://", "https://"))
    if show and not remote:
        err.write(f"loading the model ({args.llm}; its first use checks the file)...\n")
        err.flush()
    started = time.monotonic()
    llm = load_llm(args.llm, **({"model": args.model} if args.model and remote else {}))
    if show and not remote:
        err.write(f"loaded {llm!r} in {time.monotonic() - started:.1f} s\n")
    return show, llm


def _run_loop(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    from rich.console import Console
    from rich.markup import escape

    from autofeedback._catalog import ApiCatalog
    from autofeedback._redact import redact
    from autofeedback.loop._loop import FeedbackLoop

    catalog = ApiCatalog.from_file(args.spec)
    show, llm = _run_llm(args, err)
    index = None
    if args.index:
        from doc_index import build_or_load

        index = build_or_load(catalog, Path(args.index))
    console = Console(file=out, highlight=False, width=None if out.isatty() else 120)
    options = {k: getattr(args, k) for k in _LOOP_OPTIONS if getattr(args, k) is not None}
    loop = FeedbackLoop(
        _Progress.wrap(llm, err) if show else llm,
        catalog,
        base_url=args.base_url,
        allow_hosts=args.allow_host,
        doc_index=index,
        max_static=args.max_static,
        max_dynamic=args.max_dynamic,
        token_budget=args.token_budget,
        timeout=args.timeout,
        hooks={"attempt": [lambda a: _print_attempt(console, a)]},
        repair=args.repair,
        **options,
    )
    result = loop.run(args.instruction, trace=args.trace)
    verdict = "[green]success[/]" if result.success else f"[red]failed[/] ({result.stop_reason})"
    console.print(
        f"\n[bold]Result:[/] {verdict} after {len(result.attempts)} attempt(s), "
        f"{result.tokens} tokens"
    )
    if result.request is not None:
        shown = escape(str(redact(_final_text(result))))
        console.print(f"[bold]Final request:[/] {shown}")
    if result.status is not None:
        body = escape(str(redact(result.response_body or "")))
        console.print(f"[bold]Final response:[/] HTTP {result.status} {body}")
    if result.stop_reason == "unreachable":
        # the infrastructure failed, not the model: bad input, as an unreachable --llm is
        err.write(f"{_ERROR}{result.attempts[-1].error}\n")
        return 2
    return 0 if result.success else 1


class _Progress:
    """An LLM client that says on stderr while the model writes (a rich spinner on a
    terminal, one line per call otherwise); everything else is the client's own."""

    def __init__(self, llm: Any, err: IO[str]) -> None:
        self._llm = llm
        self._err = err
        self._calls = 0

    @staticmethod
    def wrap(llm: Any, err: IO[str]) -> Any:
        from autofeedback.loop._loop import _takes_schema

        # the loop asks complete() whether it takes schema=: answer as the client would
        return (_ProgressSchema if _takes_schema(llm) else _Progress)(llm, err)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def _complete(self, messages: Any, **kwargs: Any) -> Any:
        self._calls += 1
        text = f"the model is writing attempt {self._calls}"
        started = time.monotonic()
        if self._err.isatty():
            from rich.console import Console

            with Console(file=self._err).status(text + "..."):
                answer = self._llm.complete(messages, **kwargs)
        else:
            self._err.write(text + "...\n")
            self._err.flush()
            answer = self._llm.complete(messages, **kwargs)
        self._err.write(f"{text}: done in {time.monotonic() - started:.1f} s\n")
        return answer

    def complete(self, messages: Any) -> Any:
        return self._complete(messages)


class _ProgressSchema(_Progress):
    def complete(self, messages: Any, *, schema: Any = None, stop: Any = None) -> Any:
        from autofeedback.loop._loop import _takes

        options: dict[str, Any] = {} if schema is None else {"schema": schema}
        if stop is not None and _takes(self._llm, "stop"):
            options["stop"] = stop
        return self._complete(messages, **options)


def _run_task(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``autofeedback run --mode program|react``: a multi-step task, each turn printed
    with what was checked and what was fed back."""
    from rich.console import Console
    from rich.markup import escape

    from autofeedback._catalog import ApiCatalog
    from autofeedback._redact import redact
    from autofeedback.loop._tasks import ProgramRunner, ReactRunner

    catalog = ApiCatalog.from_file(args.spec)
    show, llm = _run_llm(args, err)
    if show:
        llm = _Progress.wrap(llm, err)  # keeps schema= for the grammar-constrained programs
    console = Console(file=out, highlight=False, width=None if out.isatty() else 120)
    common: dict[str, Any] = {
        "feedback": args.static is not False,
        "max_rounds": args.max_static,
        "token_budget": args.token_budget,
        "hooks": {"turn": [lambda t: _print_turn(console, t)]},
        "repair": args.repair,
    }
    if args.mode == "program":
        runner = ProgramRunner(llm, catalog, constrain=bool(args.constrain), **common)
        result = runner.run(args.instruction, trace=args.trace)
    else:
        result = ReactRunner(
            llm,
            catalog,
            base_url=args.base_url,
            allow_hosts=args.allow_host,
            max_steps=args.max_steps,
            timeout=args.timeout,
            **common,
        ).run(args.instruction, trace=args.trace)
    ok = result.stop_reason in ("clean", "answered")
    verdict = "[green]done[/]" if ok else "[red]stopped[/]"
    console.print(
        f"\n[bold]Result:[/] {verdict} ({result.stop_reason}) after {len(result.turns)} "
        f"model turn(s), {len(result.calls)} call(s) sent, {result.tokens} tokens"
    )
    if result.program:
        label = "Program" if args.mode == "program" else "Calls made"
        console.print(f"[bold]{label}:[/]\n" + escape(str(redact(result.program))))
    for f in result.errors:
        console.print(f"[red]error:[/] {escape(str(redact(str(f))))}")
    if result.answer is not None:
        console.print(f"[bold]Final answer:[/] {escape(str(redact(result.answer)))}")
    if result.stop_reason == "unreachable":
        err.write(f"{_ERROR}{result.turns[-1].error}\n")
        return 2
    return 0 if ok else 1


def _print_turn(console: Any, turn: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from autofeedback._redact import redact

    body = Text()
    body.append("model: ", style="bold")
    body.append(str(redact(turn.output.strip()[:800])) + "\n")
    if turn.kind == "program":
        body.append("checked: the whole program (E1-E5)\n", style="bold")
    elif turn.kind == "call" and turn.request is not None:
        body.append(
            f"checked: {turn.request.name} against the calls so far (E1-E5)\n", style="bold"
        )
    errors = [f for f in turn.findings if f.severity == "error"]
    if not errors and turn.kind in ("program", "call"):
        body.append("no errors\n", style="green")
    for f in turn.findings:
        style = "yellow" if f.severity == "warning" else "red"
        body.append(f"{f.severity}: {redact(str(f))}\n", style=style)
    for r in turn.repairs:
        body.append(f"repaired: {r}\n", style="green")
    if turn.kind == "program" and turn.repairs and turn.program:
        body.append(f"taken as repaired:\n{turn.program}\n", style="green")
    if turn.sent is not None:
        body.append(f"sent: {turn.sent['method']} {turn.sent['url']}\n", style="cyan")
    if turn.observation is not None:
        body.append(f"response: {turn.observation[:600]}\n")
    if turn.error:
        body.append(turn.error + "\n", style="red")
    if turn.feedback:
        body.append("fed back:\n", style="bold magenta")
        body.append(turn.feedback)
    console.print(Panel(body, title=f"turn {turn.number} ({turn.kind})", expand=False))


def _print_attempt(console: Any, attempt: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from autofeedback._redact import redact

    body = Text()
    body.append("model: ", style="bold")
    body.append(str(redact(attempt.output.strip()[:500])) + "\n")
    for f in attempt.findings:
        body.append(f"{f.severity}: {f}\n", style="yellow" if f.severity == "warning" else "red")
    for r in attempt.repairs:
        body.append(f"repaired: {r}\n", style="green")
    if attempt.sent is not None:
        body.append(f"sent: {attempt.sent['method']} {attempt.sent['url']}\n", style="cyan")
    if attempt.status is not None:
        excerpt = redact(attempt.response_excerpt or "")
        body.append(f"response: HTTP {attempt.status} {excerpt}\n")
    if attempt.explanation:
        body.append("from the docs: ", style="bold")
        body.append(attempt.explanation[:600] + "\n")
    if attempt.error:
        body.append(attempt.error + "\n", style="red")
    if attempt.feedback:
        body.append(f"{attempt.feedback_kind} feedback:\n", style="bold magenta")
        body.append(attempt.feedback)
    console.print(Panel(body, title=f"attempt {attempt.number}", expand=False))


# -- flow ---------------------------------------------------------------------------


def _flow(args: argparse.Namespace, out: IO[str]) -> int:
    from autofeedback.flow import FlowGraph, load_overrides, read_response_schemas, with_responses
    from autofeedback.flow._view import JsonFlowView, TextFlowView

    catalog = _load_specs(args.spec)
    assert catalog is not None
    if args.responses:
        catalog = with_responses(catalog, read_response_schemas(Path(args.responses)))
    overrides = load_overrides(args.links) if args.links else None
    graph = FlowGraph.from_catalog(catalog, overrides)
    names = list(catalog.names)
    if args.operation:
        op = graph.operation(args.operation)
        if op is None:
            raise _Usage(f"unknown operation {args.operation!r}")
        names = [op.name]
    view = JsonFlowView if args.format == "json" else TextFlowView
    view(out, top=max(args.top, 1)).show(graph, names)
    return 0


# -- mcp-proxy ----------------------------------------------------------------------


def _mcp_proxy_parser(sub: Any) -> argparse.ArgumentParser:
    m = sub.add_parser(
        "mcp-proxy",
        help="an MCP server in front of another: checks every tools/call against its tools",
        description="Sit between an MCP client and an MCP server: unknown tools get -32602 "
        "with a suggestion, bad arguments an isError result with feedback, valid calls go "
        "through unchanged. Example: autofeedback mcp-proxy -- python weather.py",
    )
    m.add_argument(
        "server_command",
        nargs="*",
        metavar="-- COMMAND [ARG ...]",
        help="launch the real server as a stdio subprocess",
    )
    m.add_argument(
        "--upstream-url", help="a streamable-HTTP server, e.g. http://127.0.0.1:8001/mcp"
    )
    m.add_argument(
        "--upstream-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a header for every request to --upstream-url (repeatable; never logged)",
    )
    m.add_argument(
        "--transport",
        choices=["stdio", "streamable-http"],
        default="stdio",
        help="how the proxy serves its client (default stdio)",
    )
    _host_arguments(m, "the MCP proxy")
    m.add_argument("--port", type=int, default=8000, help="streamable-http port (default 8000)")
    m.add_argument("--log", help="append a JSON line per decision (credentials redacted)")
    m.add_argument(
        "--repeat-limit",
        type=int,
        default=3,
        help="the N-th identical rejected call gets a firm stop (0: never; default 3)",
    )
    m.add_argument("--no-semantic", action="store_true", help="spelling suggestions only, no model")
    m.add_argument(
        "--no-explain-errors",
        action="store_true",
        help="pass a terse server error back without the tool's documentation",
    )
    m.add_argument("--timeout", type=float, default=300.0, help="per upstream request, seconds")
    _grace_argument(m)
    _repair_flag(m)
    return m  # type: ignore[no-any-return]


def _mcp_proxy(args: argparse.Namespace, err: IO[str]) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise _Usage(f"mcp-proxy needs the MCP SDK: {install_hint('mcp')}") from None
    from autofeedback.integrations._mcp_proxy import McpProxyOptions, run_mcp_proxy

    command = list(args.server_command)
    if command[:1] == ["--"]:
        command = command[1:]
    headers = []
    for header in args.upstream_header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise _Usage("--upstream-header wants 'NAME: VALUE'")
        headers.append((name.strip(), value.strip()))
    options = McpProxyOptions(
        command=command,
        upstream_headers=headers,
        upstream_url=args.upstream_url,
        transport=args.transport,
        host=args.host,
        allow_remote=args.allow_remote,
        grace=args.shutdown_grace,
        port=args.port,
        log=Path(args.log) if args.log else None,
        repeat_limit=args.repeat_limit,
        retriever=None if args.no_semantic else "auto",
        explain_errors=not args.no_explain_errors,
        timeout=args.timeout,
        stderr=err,
        repair=args.repair,
    )
    return run_mcp_proxy(options)


# -- proxy (issue 17): an OpenAI-compatible proxy that checks tool calls -------------


def _proxy_parser(sub: Any) -> argparse.ArgumentParser:
    px = sub.add_parser(
        "proxy",
        help="an OpenAI-compatible proxy that checks tool calls and asks again",
        description="Serve an OpenAI-compatible API in front of another one. For a chat "
        "completion or Responses request with tools, every tool call the model returns is "
        "checked against those tools; a wrong call goes back to the model with the feedback "
        "as its tool result, and the client gets the final answer. Everything else passes "
        "through unchanged. Point any OpenAI client at http://HOST:PORT/v1.",
        epilog="""exit codes:
  0  stopped with Ctrl-C (SIGTERM stops it as gracefully, then ends it by that signal)
  2  bad input: a bad --upstream URL or option, a broken --spec, a --log folder that
     does not exist, a port already in use

examples:
  autofeedback proxy --upstream http://127.0.0.1:8080/v1           # on 127.0.0.1:8787
  autofeedback proxy --upstream https://api.openai.com/v1 --port 9000 --log proxy.jsonl
  autofeedback proxy --upstream http://127.0.0.1:8080/v1 --spec openapi.yaml --no-semantic""",
    )
    px.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the OpenAI-compatible base URL to forward to, e.g. http://127.0.0.1:8080/v1",
    )
    _host_arguments(px, "the proxy")
    px.add_argument("--port", type=int, default=8787, help="port to listen on")
    px.add_argument("--spec", help="an OpenAPI document that judges the tools it names")
    px.add_argument(
        "--max-rounds", type=int, default=3, help="requests upstream per client request"
    )
    px.add_argument("--token-budget", type=int, help="stop asking again past this many tokens")
    px.add_argument(
        "--semantic",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the semantic checks with the embedding model (E2.1, E2.3, E3.3), as at every "
        "entry point; --no-semantic: structural checks and spelling suggestions only",
    )
    px.add_argument(
        "--log",
        metavar="FILE",
        help="append one JSON line per decision (credentials masked)",
    )
    _repair_flag(px)
    px.add_argument(
        "--on-give-up",
        choices=["error", "pass"],
        default="error",
        help="when the model's tool calls are still wrong after the last round: error, an "
        "HTTP 422 JSON error that the client library raises (default); pass, the completion "
        "as the model wrote it, marked in the x-autofeedback header",
    )
    px.add_argument(
        "--max-body-mb",
        type=float,
        default=32.0,
        help="request bodies past this size get a 413, upstream answers to check a 502 "
        "(default 32)",
    )
    px.add_argument(
        "--max-connections",
        type=int,
        default=100,
        help="connections to the upstream at once; a request that waits over 5 s for one "
        "gets a 503 (default 100)",
    )
    _grace_argument(px)
    return px  # type: ignore[no-any-return]


def _host_arguments(parser: Any, what: str) -> None:
    """--host and --allow-remote: the one host rule of the three servers."""
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1); a non-loopback one needs --allow-remote",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help=f"let --host be a non-loopback address ({what} has no authentication: anyone "
        "who can reach the port can use it; a warning is printed)",
    )


def _grace_argument(parser: Any) -> None:
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, in-flight requests get this long to finish before they "
        "are cancelled; a second signal stops at once (default 10)",
    )


def _proxy(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        from autofeedback.integrations._proxy import run_proxy
    except ImportError as exc:
        raise _Usage(
            f"the proxy needs starlette, uvicorn and httpx ({exc.name} is missing): "
            f"{install_hint('proxy')}"
        ) from None
    return run_proxy(
        args.upstream,
        host=args.host,
        port=args.port,
        spec=args.spec,
        max_rounds=args.max_rounds,
        token_budget=args.token_budget,
        semantic=args.semantic,
        log=args.log,
        repair=args.repair,
        give_up=args.on_give_up,
        allow_remote=args.allow_remote,
        max_body=max(1, int(args.max_body_mb * (1 << 20))),
        max_connections=args.max_connections,
        grace=args.shutdown_grace,
        stdout=out,
        stderr=err,
    )
