"""The feedback loop (the paper's Algorithm 1, made correct).

The model proposes a request; the static scanner checks it and feeds errors back (at
most ``max_static`` rounds); a clean request is sent; the response is judged; on failure
the dynamic analysis retrieves what the docs say about the error and feeds it back
ReAct-style (at most ``max_dynamic`` rounds). The printed pseudo-code loops while the
requirement is unmet *or* rounds remain and re-sends the old request; here the loop runs
while the requirement is unmet *and* rounds remain, and always sends the new request.

Beyond the paper: stop when the model repeats a request that already failed, optional
token budget, per-request timeout, never send a request with E1-E3 findings (``gate``),
never send to a host that is not a spec server, the user's base URL or an explicit
allowlist.

The paper's settings, each measuring only what it names:

===========================  ============================================================
setting                      arguments
===========================  ============================================================
Base                         ``static=False, dynamic=False``
Static                       ``static=True, dynamic=False``
Dynamic                      ``static=False, dynamic=True, gate=False``: every parsed
                             request is sent whatever the scanner found, so the server's
                             answer and the docs are the only feedback
Static & Dynamic             ``static=True, dynamic=True`` (static rounds first)
Static & Dynamic w/o DR      the same with ``retrieve_docs=False``
===========================  ============================================================

Options beyond the paper, each measured against Static & Dynamic in
``benchmarks/loop.py`` (RESULTS.md, "Feedback loop, beyond the paper"); the one that won
(``focus_docs``) is on by default, so the paper's settings above add
``focus_docs=False``:

* ``skeleton``: static feedback ends with the request every named fix applied
  (:func:`autofeedback.decide._corrected.corrected_call`), holes left for values only the user's
  request holds;
* ``focus_docs``: a retry's system prompt documents only the APIs the request and its
  findings name, not every API of the first prompt;
* ``repeat_retries``: a repeated failed request is answered with its feedback restated
  (that many times per run) before the loop stops;
* ``constrain``: grammar-constrained decoding. The model is asked for a JSON call and the
  client (:class:`~autofeedback.llm.LocalLLM` through a llama.cpp grammar, an
  OpenAI-compatible server through ``response_format``) can only produce calls to the
  prompt's APIs with their documented parameter names, required ones included, and
  values of the documented JSON types: E1-E3 cannot happen by construction.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import requests

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import check_name
from autofeedback.checks._check_response import DocumentedResponse, Requirement
from autofeedback.core._exceptions import ConfigurationError, FileNotRead, HostNotAllowed
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, Operation
from autofeedback.core._redact import auth_names, credential_values, redact_finding
from autofeedback.decide import Decider, Policy, RepairMode, check_repair
from autofeedback.decide._render import rewrite_output
from autofeedback.decide._run import (
    FILE_NOT_READ,
    HOST_NOT_ALLOWED,
    SEND_GATE,
    SUCCESS,
    UNREACHABLE,
    UNREADABLE,
    Run,
    StopReason,
)
from autofeedback.loop._llm import LLMClient
from autofeedback.loop._prompt import (
    call_schema,
    initial_messages,
    system_message,
)
from autofeedback.loop._send import (
    SENSITIVE,
    HttpCall,
    allowed_hosts,
    body_excerpt,
    build_http,
    send,
)
from autofeedback.scanner._scan import Scanner

__all__ = ["Attempt", "FeedbackLoop", "LoopResult", "StopReason"]

HOOKS = ("attempt", "finding", "response", "exhausted")


class TraceRow:
    """A turn as one JSON row of a trace: its findings and request as plain data. Mixed
    into the dataclasses :class:`Attempt` and ``TaskTurn``."""

    request: ApiRequest | None
    findings: tuple[Finding, ...]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(cast(Any, self))
        d["findings"] = [f.as_dict() for f in self.findings]
        d["request"] = _request_dict(self.request)
        return d


@dataclass(frozen=True)
class Attempt(TraceRow):
    """One model turn and what became of it."""

    number: int
    output: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    request: ApiRequest | None = None
    findings: tuple[Finding, ...] = ()
    feedback: str | None = None
    feedback_kind: Literal["static", "dynamic"] | None = None
    sent: Mapping[str, Any] | None = None  # the HTTP call, credentials redacted
    #: what autofeedback repaired in the request before sending it or feeding it back
    repairs: tuple[Repair, ...] = ()
    status: int | None = None
    response_excerpt: str | None = None
    explanation: str | None = None
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class LoopResult:
    """The outcome: the final request and response, and every attempt for the human who
    takes over."""

    success: bool
    stop_reason: StopReason
    request: ApiRequest | None
    status: int | None
    response_body: str | None
    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @property
    def tokens(self) -> int:
        return sum((a.prompt_tokens or 0) + (a.completion_tokens or 0) for a in self.attempts)


class FeedbackLoop:
    """Bounded static + dynamic feedback around any LLM.

    >>> loop = FeedbackLoop(llm, catalog, base_url=sandbox.url)   # doctest: +SKIP
    >>> result = loop.run("Find books by Frank Herbert")         # doctest: +SKIP
    >>> result.success, len(result.attempts)                     # doctest: +SKIP
    (True, 2)
    """

    def __init__(
        self,
        llm: LLMClient | Callable[[list[dict[str, str]]], Any],
        catalog: ApiCatalog,
        *,
        base_url: str | None = None,
        allow_hosts: Iterable[str] = (),
        scanner: Scanner | None = None,
        doc_index: Any = None,
        max_static: int = 3,
        max_dynamic: int = 2,
        static: bool = True,
        dynamic: bool = True,
        retrieve_docs: bool = True,
        requirement: Requirement | None = None,
        token_budget: int | None = None,
        timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        hooks: Mapping[str, Sequence[Callable[[Any], None]]] | None = None,
        max_prompt_apis: int = 8,
        gate: bool = True,
        skeleton: bool = False,
        focus_docs: bool = True,
        repeat_retries: int = 0,
        constrain: bool = False,
        repair: RepairMode = "sure",
    ) -> None:
        check_repair(repair)
        if max_static < 0 or max_dynamic < 0 or repeat_retries < 0:
            raise ConfigurationError("max_static, max_dynamic and repeat_retries must be >= 0")
        llm = _as_client(llm)
        if constrain and not _takes_schema(llm):
            raise ConfigurationError(
                f"constrain=True needs an LLM client whose complete() takes schema= "
                f"(LocalLLM, OpenAICompatibleLLM); {type(llm).__name__} does not"
            )
        unknown = set(hooks or {}) - set(HOOKS)
        if unknown:
            raise ConfigurationError(f"unknown hooks {sorted(unknown)}; known: {list(HOOKS)}")
        self.llm = _as_client(llm)
        self.catalog = catalog
        self.base_url = base_url or (catalog.servers[0] if catalog.servers else None)
        if self.base_url is None:
            raise ConfigurationError("the spec declares no server: pass base_url")
        self.allowed = allowed_hosts(catalog, base_url, allow_hosts)
        self.scanner = scanner or Scanner(catalog)
        self._doc_index = doc_index
        self.max_static = max_static
        self.max_dynamic = max_dynamic
        self.static = static
        self.dynamic = dynamic
        self.retrieve_docs = retrieve_docs
        self.requirement = requirement or DocumentedResponse(catalog, self.base_url)
        self.token_budget = token_budget
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.session = session or requests.Session()
        self.hooks: dict[str, list[Callable[[Any], None]]] = {
            name: list((hooks or {}).get(name, ())) for name in HOOKS
        }
        self.max_prompt_apis = max_prompt_apis
        self.gate = gate
        self.skeleton = skeleton
        self.focus_docs = focus_docs
        self.repeat_retries = repeat_retries
        self.constrain = constrain
        #: ``"sure"``: what is certain is repaired before the request is sent or fed back
        #: (:mod:`autofeedback.decide`); ``"off"``: the model fixes everything itself
        self.repair = repair
        self.decider = Decider(self.scanner, repair=repair)
        self._auth_names = auth_names(self.catalog)
        self._secrets = [
            p
            for k, v in self.headers.items()
            if k.lower() in SENSITIVE and v
            for p in credential_values(v)
        ]

    # -- pieces -----------------------------------------------------------------------

    @property
    def doc_index(self) -> Any:
        if self._doc_index is None:
            from doc_index import DocIndex

            self._doc_index = DocIndex.build(self.catalog)
        return self._doc_index

    def _prompt_ops(self, instruction: str) -> list[Operation]:
        ops = list(self.catalog.operations)
        if len(ops) <= self.max_prompt_apis or self.scanner.retriever is None:
            return ops[: max(self.max_prompt_apis, 50)]
        ranked = self.scanner.retriever.rank(instruction, self.catalog, k=self.max_prompt_apis)
        return [op for r in ranked if (op := self.catalog.get(r.name)) is not None]

    def _relevant_ops(
        self, request: ApiRequest | None, findings: Sequence[Finding]
    ) -> list[Operation]:
        """The APIs a retry needs documented: the one the request names and those its
        findings point to (a suggested API, the owner of a foreign parameter)."""
        names: list[str] = []
        if request is not None:
            op = check_name(request, self.catalog).operation
            if op is not None:
                names.append(op.name)
        for f in findings:
            if f.code.startswith("E2") and f.suggestion:
                names.append(f.suggestion)
            if f.operation:
                names.append(f.operation)
        ops = [self.catalog.get(n) for n in dict.fromkeys(names)]
        return [op for op in ops if op is not None]

    def _complete(self, messages: list[dict[str, str]], ops: Sequence[Operation]) -> str:
        if self.constrain:
            return self.llm.complete(messages, schema=call_schema(ops))  # type: ignore[call-arg]
        return self.llm.complete(messages)

    def _fire(self, hook: str, value: Any) -> None:
        for fn in self.hooks[hook]:
            fn(value)

    def _explain(
        self,
        op: Operation | None,
        status: int | None,
        body: str,
        request: ApiRequest,
        run: Run | None = None,
    ) -> list[str] | None:
        """What the docs say about the refusal: its documented cause, the part of the
        request it concerns, the call that would resolve it (as feedback lines), told to
        ``run`` for the rounds that follow."""
        if not self.retrieve_docs or status is None:
            return None
        from autofeedback.loop._explain import explain_response

        explanation = explain_response(
            self.doc_index,
            op if op is not None else None,
            status,
            body,
            request=request,
            catalog=self.catalog,
        )
        if run is not None and explanation.cause:
            named = explanation.next_call
            run.docs_said(
                next_call=named.operation if named is not None else None,
                fixable=bool(explanation.concerns),
            )
        return explanation.lines() or None

    # -- the loop -----------------------------------------------------------------------

    def run(
        self, instruction: str, *, intent: str | None = None, trace: str | Path | None = None
    ) -> LoopResult:
        """Ask, check, send, judge, explain, until the requirement is met or the budgets
        run out. Never mutates anything the caller passed in.

        ``instruction`` is what the model reads. ``intent`` is what this one request must
        do, when that is only part of it: the last user turn of a dialogue whose earlier
        turns called other APIs. The E2.1 check and the choice of APIs for the prompt
        compare APIs with it (default: the whole instruction); judged against a whole
        dialogue, the APIs it already called look like better fits than the right one.
        """
        intent = instruction if intent is None else intent
        found = self.scanner._dialogue_scanner(None, instruction, intent)
        if found is not self.scanner:
            # a tool search in the dialogue (an API-Bank `->` result, a ReAct Observation)
            # documented tools: for this run they are documented APIs, checked and sent
            return self._with_scanner(found).run(instruction, intent=intent, trace=trace)
        doc_ops = self._prompt_ops(intent)
        messages = initial_messages(instruction, doc_ops, json_calls=self.constrain)
        attempts: list[Attempt] = []
        # the run driver owns the bounds (static rounds, repeats, tokens, the dynamic
        # budget), the stop, the call key and the feedback; the gate says which errors
        # keep a request in once no feedback is left
        run = Run(
            Policy(
                repair=self.repair,
                feedback=self.static,
                max_rounds=self.max_static,
                repeats=self.repeat_retries,
                token_budget=self.token_budget,
                block=SEND_GATE if self.gate else UNREADABLE,
                max_dynamic=self.max_dynamic if self.dynamic else 0,
            ),
            "loop",
            scanner=self.scanner,
            instruction=intent,
            skeleton=self.skeleton,
        )
        request: ApiRequest | None = None
        attempt: Attempt | None = None
        while run.stop is None:
            started = time.perf_counter()
            text = self._complete(list(messages), doc_ops)
            usage = getattr(self.llm, "last_usage", None)
            p_tok = getattr(usage, "prompt_tokens", None)
            c_tok = getattr(usage, "completion_tokens", None)
            run.asked((p_tok or 0) + (c_tok or 0))
            decision = self.decider.decide(text, instruction=intent, context=instruction)[0]
            decision = run.after_refusals(decision)
            original = decision.original
            findings = list(decision.findings)
            remaining = list(decision.remaining)
            if self._secrets:  # the loop's own credentials, echoed in the request
                findings, remaining = (
                    [redact_finding(f, names=self._auth_names, secrets=self._secrets) for f in fs]
                    for fs in (findings, remaining)
                )
                decision = dataclasses.replace(decision, remaining=tuple(remaining))
            for f in findings:
                self._fire("finding", f)
            base = Attempt(
                len(attempts) + 1,
                text,
                p_tok,
                c_tok,
                original,
                tuple(findings),
                repairs=decision.repairs,
            )
            turn = run.loop_turn(decision, text=text)
            request = turn.request
            # the model's turn as autofeedback holds it: its text with the repaired call
            shown = text
            if decision.repairs and original is not None and request is not None:
                shown = rewrite_output(text, [(original, request)]) or text
            if turn.action == "send":
                assert request is not None
                attempt = self._send(base, request, started, run, turn.key)
            else:
                attempt = _done(
                    base, started, feedback=turn.feedback, feedback_kind=turn.kind, error=turn.error
                )
            run.check_budget()
            attempts.append(attempt)
            self._fire("attempt", attempt)
            if attempt.feedback is not None and run.stop is None:
                if self.focus_docs:
                    focused = self._relevant_ops(request, findings)
                    if focused:
                        doc_ops = focused
                        messages[0] = system_message(doc_ops, json_calls=self.constrain)
                messages = [
                    *messages,
                    {"role": "assistant", "content": shown},
                    {"role": "user", "content": attempt.feedback},
                ]
        assert attempt is not None
        stop = cast(StopReason, run.stop)
        success = stop == SUCCESS
        result = LoopResult(
            success, stop, request, attempt.status, attempt.response_excerpt, tuple(attempts)
        )
        if not success:
            self._fire("exhausted", result)
        if trace is not None:
            self.write_trace(result, trace)
        return result

    def _with_scanner(self, scanner: Scanner) -> FeedbackLoop:
        """This loop over ``scanner``'s catalog (this one's plus tools a dialogue found),
        for one run: the caller's loop is left as it is."""
        clone = copy.copy(self)
        clone.catalog = scanner.catalog
        clone.scanner = scanner
        clone._auth_names = auth_names(scanner.catalog)
        if isinstance(self.requirement, DocumentedResponse) and (
            self.requirement.catalog is self.catalog
        ):
            clone.requirement = DocumentedResponse(scanner.catalog, self.base_url)
        return clone

    def _send(
        self, base: Attempt, request: ApiRequest, started: float, run: Run, key: Any
    ) -> Attempt:
        """Send ``request`` and judge the response; a refusal goes to the run, which feeds
        it back (with what the docs say about it) or ends."""
        named = check_name(request, self.catalog)
        op = named.operation
        assert op is not None or not self.gate  # E2 findings would have blocked the request
        assert self.base_url is not None
        if op is None:
            # ungated and no documented API: sent where a function of that name would
            # live (an HTTP request keeps its own method and path), for the server to refuse
            call = build_http(request, Operation(request.name or ""), self.base_url, self.headers)
        else:
            call = build_http(request, op, self.base_url, self.headers)
        sent = self._redact_call(call, op)
        try:
            response = send(call, allowed=self.allowed, session=self.session, timeout=self.timeout)
        except HostNotAllowed as exc:
            run.end(HOST_NOT_ALLOWED)
            return _done(base, started, sent=sent, error=str(exc))
        except FileNotRead as exc:
            run.end(FILE_NOT_READ)  # checked, and not the model's error: nothing to feed back
            return _done(base, started, sent=None, error=str(exc))
        except (requests.ConnectionError, requests.Timeout) as exc:
            # the infrastructure's failure, not the model's: no feedback, no retry
            run.end(UNREACHABLE)
            return _done(base, started, sent=sent, error=_unreachable(call.url, exc))
        except requests.RequestException as exc:
            status, body, ok = None, f"{type(exc).__name__}: {exc}"[:300], False
        else:
            status, body = response.status_code, body_excerpt(response)
            ok = op is not None and self.requirement(op, response)
        self._fire("response", (status, body))
        if ok:
            run.end(SUCCESS)
            return _done(base, started, sent=sent, status=status, response_excerpt=body)
        action = f"{call.method} {sent['url']}" + (
            f" {json.dumps(call.json)[:300]}" if call.json is not None else ""
        )
        feedback, explained = run.refused(
            key, action, status, body, lambda: self._explain(op, status, body, request, run)
        )
        explanation = "\n".join(explained) if explained else None
        return _done(
            base,
            started,
            sent=sent,
            status=status,
            response_excerpt=body,
            explanation=explanation,
            feedback=feedback,
            feedback_kind="dynamic" if feedback else None,
        )

    def _redact_call(self, call: HttpCall, op: Operation | None) -> dict[str, Any]:
        extra = [p.name for p in op.auth_parameters] if op else []
        return self._scrub(call.redacted(extra))  # type: ignore[no-any-return]

    def _scrub(self, value: Any) -> Any:
        """Replace every credential wherever it appears (URLs, bodies, text): the one
        redaction of :mod:`autofeedback.core._redact`, with the spec's auth names."""
        from autofeedback.core._redact import auth_names, redact

        return redact(value, names=auth_names(self.catalog), secrets=self._secrets)

    def write_trace(self, result: LoopResult, path: str | Path) -> None:
        """One JSON line per attempt, then a summary line; credentials redacted."""
        with open(path, "a", encoding="utf-8") as fh:
            for a in result.attempts:
                fh.write(json.dumps(self._scrub(a.as_dict()), default=str) + "\n")
            fh.write(
                json.dumps(
                    self._scrub(
                        {
                            "summary": True,
                            "success": result.success,
                            "stop_reason": result.stop_reason,
                            "status": result.status,
                            "tokens": result.tokens,
                            "request": _request_dict(result.request),
                        }
                    ),
                    default=str,
                )
                + "\n"
            )


def _as_client(llm: Any) -> LLMClient:
    """A client as given, or a plain callable ``fn(messages) -> str`` wrapped in
    :class:`~autofeedback.loop._llm.CallableLLM` (the adapter docs/loop.md promises)."""
    if callable(getattr(llm, "complete", None)):
        return llm  # type: ignore[no-any-return]
    if callable(llm):
        from autofeedback.loop._llm import CallableLLM

        return CallableLLM(llm)
    raise ConfigurationError(
        f"an LLM client has complete(messages) -> str or is a callable; got {type(llm).__name__}"
    )


def _takes(llm: Any, name: str) -> bool:
    """Whether ``llm.complete`` takes the keyword ``name`` (or any keyword)."""
    try:
        params = inspect.signature(llm.complete).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _takes_schema(llm: Any) -> bool:
    return _takes(llm, "schema")


def _unreachable(url: str, exc: Exception) -> str:
    """One line for a server that did not answer: its origin, what happened, a hint."""
    from autofeedback.core._origins import shown_origin

    origin = shown_origin(url)
    if isinstance(exc, requests.Timeout) and not isinstance(exc, requests.ConnectTimeout):
        return f"{origin} did not answer in time (read timeout): is the server overloaded?"
    return f"cannot reach {origin}: is the server running?"


def _done(base: Attempt, started: float, **changes: Any) -> Attempt:
    from dataclasses import replace

    return replace(base, seconds=round(time.perf_counter() - started, 4), **changes)


def _request_dict(request: ApiRequest | None) -> dict[str, Any] | None:
    if request is None:
        return None
    d = asdict(request)
    d["arguments"] = dict(request.arguments)
    return d
