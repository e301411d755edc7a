"""``autofeedback run``: the feedback loop against a live API (``--mode single``), or a
multi-step task (``--mode program|react``), each attempt or turn printed with what was
checked and what was fed back."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import IO, Any

from autofeedback.cli._common import _ERROR, _require
from autofeedback.cli._options import _repair_flag


def add_parser(sub: Any) -> argparse.ArgumentParser:
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
    return r  # type: ignore[no-any-return]


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


def command(args: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    _require(args, "spec", "instruction")
    if args.mode != "single":
        return _run_task(args, out, err)
    return _run_loop(args, out, err)


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

    from autofeedback.catalog._catalog import ApiCatalog
    from autofeedback.core._redact import redact
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
    if result.stop_reason in ("unreachable", "file-not-read"):
        # the infrastructure failed, or the call uploads a local file that is not read:
        # not the model's error, bad input, as an unreachable --llm is
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

    from autofeedback.catalog._catalog import ApiCatalog
    from autofeedback.core._redact import redact
    from autofeedback.loop._program_runner import ProgramRunner
    from autofeedback.loop._react_runner import ReactRunner

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
    if result.stop_reason in ("unreachable", "file-not-read"):
        err.write(f"{_ERROR}{result.turns[-1].error}\n")
        return 2
    return 0 if ok else 1


def _print_turn(console: Any, turn: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from autofeedback.core._redact import redact

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

    from autofeedback.core._redact import redact

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
