"""The proxy's checked rounds: the tool calls of an upstream answer read, decided by the
run driver, repaired in place or answered with feedback and asked again; the rounds
logged and summed into one answer. An adapter: the rounds, bounds, stops and wording are
the driver's (:mod:`autofeedback.decide._run`); see
:mod:`autofeedback.integrations._proxy`."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from autofeedback._parse._providers import kept_upstream
from autofeedback.checks._check_values import not_checked
from autofeedback.core._model import ToolCallShape
from autofeedback.core._patterns import PatternBudget
from autofeedback.core._redact import redact
from autofeedback.decide import Decider, Policy
from autofeedback.decide._calls import Call, ToolCallsDecision, decide_calls, reply
from autofeedback.decide._feedback import gave_up
from autofeedback.decide._run import Run, logged_action, upstream_stop
from autofeedback.integrations._proxy_config import ProxyConfig, T, _Lanes
from autofeedback.integrations._proxy_http import (
    _DROP_RESPONSE,
    _HEADER,
    _HEADER_CODES,
    _HEADER_REPAIRS,
    _anthropic_sse,
    _dumps,
    _error,
    _forward_headers,
    _post_capped,
    _responses_sse,
    _secret_of,
    _sse,
    _too_large_answer,
    _upstream_answer,
)
from autofeedback.scanner._scan import Scanner

__all__ = ["ROUND_BUDGET"]

_log = logging.getLogger("autofeedback.proxy")


def _chat_calls(data: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[Call]]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, []
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None, []
    calls: list[Call] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        call_id = call.get("id") if isinstance(call, Mapping) else None
        calls.append(
            Call(
                "openai-chat",
                call_id if isinstance(call_id, str) else None,
                function.get("name"),
                function.get("arguments"),
            )
        )
    return message, calls


def _responses_calls(data: Mapping[str, Any]) -> list[Call]:
    output = data.get("output")
    return _typed_calls(output, "function_call", "openai-responses", "call_id", "arguments")


def _calls(data: Mapping[str, Any], kind: str) -> tuple[dict[str, Any] | None, list[Call]]:
    """The assistant message (Chat Completions only) and the tool calls of an answer."""
    if kind == "chat":
        return _chat_calls(data)
    return None, _anthropic_calls(data) if kind == "anthropic" else _responses_calls(data)


def _events(final: Mapping[str, Any], kind: str, include_usage: bool) -> Iterator[bytes]:
    """The final answer as the streaming events of its API."""
    if kind == "chat":
        return _sse(final, include_usage)
    return _anthropic_sse(final) if kind == "anthropic" else _responses_sse(final)


def _anthropic_calls(data: Mapping[str, Any]) -> list[Call]:
    return _typed_calls(data.get("content"), "tool_use", "anthropic", "id", "input")


def _typed_calls(
    items: Any, kind: str, shape: ToolCallShape, id_key: str, arguments_key: str
) -> list[Call]:
    """The calls among an answer's items of type ``kind`` (the Responses API's
    ``function_call`` output items, Anthropic's ``tool_use`` content blocks)."""
    calls: list[Call] = []
    for item in items or []:
        if isinstance(item, Mapping) and item.get("type") == kind:
            call_id = item.get(id_key)
            calls.append(
                Call(
                    shape,
                    call_id if isinstance(call_id, str) else None,
                    item.get("name"),
                    item.get(arguments_key),
                )
            )
    return calls


def _tokens(usage: Any) -> int:
    if not isinstance(usage, Mapping):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [
        usage.get(k)
        for k in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens")
    ]
    return sum(p for p in parts if isinstance(p, int))


def _sum_usage(usages: Sequence[Any]) -> dict[str, Any] | None:
    """Every integer count summed (``prompt_tokens``, ``input_tokens``...); nested
    ``*_details`` summed the same way."""
    out: dict[str, Any] = {}
    seen = False
    for usage in usages:
        if not isinstance(usage, Mapping):
            continue
        seen = True
        for key, value in usage.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                out[key] = out.get(key, 0) + value
            elif isinstance(value, Mapping):
                inner = out.setdefault(key, {})
                if isinstance(inner, dict):
                    for k, v in value.items():
                        if isinstance(v, int) and not isinstance(v, bool):
                            inner[k] = inner.get(k, 0) + v
    return out if seen else None


async def _checked(
    client: httpx.AsyncClient,
    request: Request,
    target: httpx.URL,
    payload: dict[str, Any],
    kind: str,
    scanner: Scanner,
    config: ProxyConfig,
    lanes: _Lanes,
    size: int,
) -> Response:
    """The rounds of one checked request, each round's calls decided by the one decision
    (:func:`~autofeedback.decide._calls.decide_calls`). ``size``: its body's, which
    picks the lane its CPU work runs in (:class:`_Lanes`): serialising, parsing,
    deciding."""
    started = time.perf_counter()
    stream = bool(payload.get("stream"))
    options = payload.get("stream_options")
    include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
    body = {k: v for k, v in payload.items() if k not in ("stream", "stream_options")}
    headers = _forward_headers(request, b"accept", b"content-type")
    headers.append((b"content-type", b"application/json"))

    if kind in ("chat", "anthropic"):
        history = list(body.get("messages") or [])
    else:
        given = body.get("input")
        history = (
            list(given) if isinstance(given, list) else [{"role": "user", "content": given or ""}]
        )

    # the chat so far, earlier tool calls and their results included: the new calls are
    # its next steps (an id no response returned and the user never gave: E5.3), judged
    # as the audit and check_tool_calls(history=) judge the same conversation. Not where
    # the Responses API keeps the conversation itself (previous_response_id,
    # conversation): its input is then only the latest items, and an id an earlier turn
    # returned would look made up; the calls are judged alone, against what was said
    asked = None if kept_upstream(body) else list(history)
    # what the user asked: the last user turn (E2.1), and all the model was told: the
    # system and developer messages (an agent's prompt carries its account, calendar and
    # tenant ids) and every user turn (E5.3)
    users = _user_texts(history)
    told = _told_texts(body, history)
    said = (users[-1] if users else None, "\n".join([*told, *users]) or None)
    # the one decision, and the run driver with this request's bounds: rounds upstream,
    # repeats, tokens; it names the stop and words the replies
    decider = Decider(scanner, repair=config.repair)
    run = Run(
        Policy(
            repair=config.repair,
            max_rounds=config.max_rounds - 1,
            token_budget=config.token_budget,
        ),
        "proxy",
        scanner=scanner,
    )
    usages: list[Any] = []
    codes: list[str] = []
    repairs: list[Any] = []
    unchecked = 0
    logged: list[dict[str, Any]] = []  # --log: each round's calls and decision
    final: dict[str, Any] | None = None
    remaining: list[Any] = []
    response: httpx.Response | None = None
    invalid: str | None = None  # what is wrong with the upstream's answer
    while run.stop is None:
        if kind == "responses":
            body["input"] = history
        else:
            body["messages"] = history
        content = await lanes.run(size, _dumps, body)
        response, answered = await _post_capped(client, target, content, headers, config.max_body)
        if answered is None:
            return _too_large_answer(config, request)
        if response.status_code != 200:
            run.end(upstream_stop(response.status_code))
            break
        size = max(size, len(answered))
        data, invalid = await lanes.run(size, _upstream_answer, answered, kind)
        if invalid is not None:
            run.end(upstream_stop(None))
            break
        usages.append(data.get("usage"))
        run.asked(_tokens(data.get("usage")))
        message, calls = _calls(data, kind)
        if not calls:
            final = data
            run.text_answer()  # text, not a call (after feedback: answered)
            break
        decided = await lanes.run(
            size,
            functools.partial(
                _within_budget,
                decide_calls,
                message if kind == "chat" else data,
                decider,
                history=asked,
                instruction=said[0],
                context=said[1],
                graph=scanner._graph if asked is not None else None,
            ),
        )
        codes.extend(
            f.code for c in decided.calls for f in c.decision.findings if f.severity == "error"
        )
        # values a pattern RE2 cannot run left undecided within the time bound
        unchecked += sum(not_checked(f) for c in decided.calls for f in c.decision.findings)
        repairs.extend(decided.repairs)
        raw = [(c.name, c.arguments) for c in calls]
        turn = await lanes.run(size, run.message_turn, decided, raw)
        logged.append(_round_record(request, run.answers, calls, decided, turn.action))
        if turn.action == "forward":
            final = _with_message(data, decided.message, kind)
            break
        if turn.action == "stop":
            final = data
            remaining = [f.as_dict() for c in decided.calls for f in c.decision.errors]
            break
        replies = _replies(calls, turn.feedback)
        # the model's turn as autofeedback holds it: the calls with the certain repairs
        shown = _with_message(data, decided.message, kind)
        if kind == "chat":
            shown_message, _ = _chat_calls(shown)
            assert shown_message is not None
            history = [*history, shown_message, *replies]
        elif kind == "anthropic":
            # the tool results answer the assistant's turn in one user turn
            turn_message = {"role": "assistant", "content": shown.get("content", [])}
            history = [*history, turn_message, {"role": "user", "content": replies}]
        else:
            history = [*history, *shown.get("output", []), *replies]

    ms = round((time.perf_counter() - started) * 1000, 1)
    rounds, stop = run.answers, run.stop or upstream_stop(None)
    summary: dict[str, Any] = {"rounds": rounds, "codes": codes, "stop": stop, "ms": ms}
    # --log: one line per round's decision (issue 28), written once the rounds are over
    _log_rounds(request, logged, stop, ms)
    if repairs:
        summary["repairs"] = [r.as_dict() for r in repairs]
    if remaining:
        summary["remaining"] = remaining[:5]
    if unchecked:
        summary["unchecked"] = unchecked
    _log.info(
        "%s %s -> rounds=%d stop=%s codes=%s repairs=%d",
        request.method,
        request.url.path,
        rounds,
        stop,
        ",".join(codes) or "-",
        len(repairs),
    )
    # the header holds the first codes and repairs (a header line is no place for 3,000
    # of them: 30 KB); the body's "autofeedback" field has every one
    # the header names each code once, those of the repairs included (a repaired E3.2
    # is a mistake the model made as much as the E2.2 before it); the body's
    # "autofeedback" field counts every finding of every round
    distinct = list(dict.fromkeys([*codes, *(r.code for r in repairs)]))
    shown_header: dict[str, Any] = {"rounds": rounds, "codes": distinct[:_HEADER_CODES]}
    if len(distinct) > _HEADER_CODES:
        shown_header["more"] = len(distinct) - _HEADER_CODES
    shown_header["stop"] = stop
    if repairs:
        shown_header["repairs"] = [str(r) for r in repairs[:_HEADER_REPAIRS]]
        if len(repairs) > _HEADER_REPAIRS:
            shown_header["more_repairs"] = len(repairs) - _HEADER_REPAIRS
    header = json.dumps(shown_header, separators=(",", ":"), ensure_ascii=True)
    assert response is not None
    if invalid is not None:
        # an answer the client's SDK could not read either: say what is wrong with it
        _log.warning("upstream %s answered %s", config.shown_upstream, invalid)
        answer = _error(502, f"the upstream's answer {invalid}", "upstream_invalid_response")
        answer.headers[_HEADER] = header
        return answer
    if final is None:  # the first request already failed upstream: hand its answer back
        out_headers = {k: v for k, v in response.headers.items() if k.lower() not in _DROP_RESPONSE}
        out_headers[_HEADER] = header
        return Response(answered, response.status_code, headers=out_headers)
    if remaining and config.give_up == "error":
        # the calls are still wrong: the agent's client raises instead of running them
        message_text = gave_up(rounds, stop, remaining[0])
        shown_error: dict[str, Any] = {"message": message_text, "type": "invalid_tool_call"}
        if kind != "anthropic":  # OpenAI's error object; Anthropic's is {type, error}
            shown_error.update(code="tool_call_invalid", param=None)
        error: dict[str, Any] = {"error": shown_error, "autofeedback": summary}
        if kind == "anthropic":
            error = {"type": "error", **error}
        return JSONResponse(error, 422, headers={_HEADER: header})
    final = dict(final)
    total = _sum_usage(usages)
    if total is not None:
        final["usage"] = total
    final["autofeedback"] = summary
    if stream:
        # every event built before the first is sent: an upstream answer of an odd shape
        # is then a JSON error, never a stream cut halfway
        events = await lanes.run(size, lambda: list(_events(final, kind, include_usage)))
        return StreamingResponse(
            iter(events),
            media_type="text/event-stream",
            headers={_HEADER: header, "cache-control": "no-cache"},
        )
    rendered = await lanes.run(size, _dumps, final)
    return Response(rendered, media_type="application/json", headers={_HEADER: header})


#: Seconds of bounded-matcher searches (patterns RE2 cannot run) one round's calls may
#: take together: each call has :data:`~autofeedback.core._patterns.CHECK_BUDGET` of its own,
#: and a message of many calls must not multiply it.
ROUND_BUDGET = 2.0


def _within_budget(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with PatternBudget(ROUND_BUDGET):
        return fn(*args, **kwargs)


def _round_record(
    request: Request, number: int, calls: Sequence[Call], decided: ToolCallsDecision, action: str
) -> dict[str, Any]:
    """One round for the log: its calls (arguments masked) with their error codes and
    repairs, and the decision (``forward``, ``feed_back`` or ``stop``)."""
    secret = _secret_of(request)
    secrets = [secret] if secret else []
    shown = []
    for call, c in zip(calls, decided.calls, strict=True):
        arguments = call.arguments
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError, RecursionError):
                arguments = json.loads(arguments)
        entry: dict[str, Any] = {
            "tool": call.name,
            "arguments": redact(arguments, secrets=secrets),
            "codes": [f.code for f in c.decision.findings if f.severity == "error"],
        }
        if c.decision.repairs:
            entry["repairs"] = [r.as_dict() for r in c.decision.repairs]
        shown.append(entry)
    return {"round": number, "calls": shown, "decision": logged_action(action)}


def _log_rounds(request: Request, logged: Sequence[dict[str, Any]], stop: str, ms: float) -> None:
    """The rounds' records as JSON lines (``--log``); the last carries the stop and the
    time. An upstream that failed before any round is one ``stop`` line."""
    log = getattr(request.app.state, "log", None)
    if log is None or log.handle is None:
        return
    for i, record in enumerate(logged):
        extra = {"stop": stop, "ms": ms} if i == len(logged) - 1 else {}
        log.write(request.url.path, **record, **extra)
    if not logged:
        log.write(request.url.path, round=0, calls=[], decision="stop", stop=stop, ms=ms)


def _with_message(data: dict[str, Any], message: Any, kind: str) -> dict[str, Any]:
    """The upstream answer with the (repaired) assistant message in place."""
    if kind != "chat":
        return message if isinstance(message, dict) else data
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(message, dict):
        return data
    first = {**choices[0], "message": message}
    return {**data, "choices": [first, *choices[1:]]}


def _replies(calls: Sequence[Call], texts: Sequence[str | None]) -> list[dict[str, Any]]:
    """The tool results answering a message that goes back to the model: each call's
    text from the run (its feedback, or that it did not run), in the call's shape."""
    return [reply(call, text or "", False) for call, text in zip(calls, texts, strict=True)]


def _told_texts(body: Mapping[str, Any], history: Sequence[Any]) -> list[str]:
    """The Responses API's ``instructions``, Anthropic's ``system`` (text, or text
    blocks) and the system and developer messages, as text."""
    out = []
    for key in ("instructions", "system"):
        told = body.get(key)
        if isinstance(told, list):
            told = " ".join(str(p.get("text", "")) for p in told if isinstance(p, Mapping))
        if isinstance(told, str) and told.strip():
            out.append(told)
    for m in history:
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer"):
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, Mapping)
                )
            if isinstance(content, str) and content.strip():
                out.append(content)
    return out


def _user_texts(history: Sequence[Any]) -> list[str]:
    """The user's turns, as text (a string, or the text parts of a content list)."""
    out = []
    for m in history:
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        if isinstance(content, str) and content.strip():
            out.append(content)
    return out
