"""The calls of a record (``audit --fix``): the one decision on a record's call(s), made
from the findings the audit reports, and the record written again with the certain
repairs, in the shape the record gave it.

A ``call`` stays a ``{"name", "arguments"}`` object (with its own key names, and
arguments a JSON string where they were one), a ``request`` stays a request object, an
``output`` stays text in its own format (a program stays a program), a trace's ``steps``
and a chat log's ``messages`` keep every step and message, the repaired calls written in
place. Where a repaired call cannot be written back in its format, there is no repair
(``None``): the record is reported as it was.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.core._redact import redact, redact_repair, value_secrets
from autofeedback.decide._decision import Decider, Decision
from autofeedback.decide._render import _rewrite_call_object, rewrite_output

__all__ = [
    "RecordRepair",
    "next_steps",
    "repair_record",
    "repair_sequence",
    "write_call",
    "write_messages",
    "write_steps",
]


@dataclasses.dataclass(frozen=True)
class RecordRepair:
    """A record's repairs: ``repaired``, the record's value written again (credentials
    masked, as every report shows it); ``repairs`` as reports show them (masked);
    ``fixes``, each finding's ``fix`` (matched by code and location)."""

    repaired: Any
    repairs: tuple[Repair, ...]
    fixes: tuple[Repair, ...]


def _masked(
    repaired: Any,
    repairs: Sequence[Repair],
    scanner: Any,
    source: Any,
    read: Iterable[ApiRequest | None] = (),
) -> RecordRepair:
    """The repair as every report shows it: credentials masked (the names a credential
    goes by, the spec's ``securitySchemes`` included, and every credential value
    ``source``, the record, carries, wherever it is repeated). ``read``: the requests
    read from the record, whose credentials a text holds where no JSON key names them
    (``<API>f(api_key='...')</API>``, a program, arguments as JSON text)."""
    names = scanner._auth_names
    calls = [_request_data(r) for r in read if r is not None]
    shown = redact(repaired, names=names, secrets=value_secrets([source, *calls], names))
    return RecordRepair(
        shown, tuple(redact_repair(r, names=names) for r in repairs), tuple(repairs)
    )


def _request_data(request: ApiRequest) -> dict[str, Any]:
    """A request's parts as plain data, for :func:`value_secrets`."""
    return {
        "arguments": dict(request.arguments),
        "params": dict(request.params),
        "headers": dict(request.headers),
        "body": request.body,
        "url": request.url,
    }


def next_steps(
    checker: Any,
    history: Sequence[Any],
    requests: Sequence[ApiRequest],
    context: str | None = None,
) -> tuple[Any, int, list[Finding]]:
    """The chat ``history`` with ``requests`` as its next steps: the sequence, the index
    of the first of them, and the sequence's findings (checked once: the audit reports
    those of the new steps, and the decision repairs from the same). ``context``: what
    the model was told outside the history's messages, grounding values as they do."""
    from autofeedback.flow._sequence import Step, sequence_from_chat, told_also

    earlier = sequence_from_chat(list(history))
    first = len(earlier.steps)
    steps = (*earlier.steps, *(Step(first + i, r) for i, r in enumerate(requests)))
    seq = told_also(dataclasses.replace(earlier, steps=steps), context)
    return seq, first, list(checker.iter_findings(seq))


def repair_record(
    value: Any,
    kind: str,
    scanner: Any,
    instruction: str | None,
    context: str | None = None,
    *,
    findings: Sequence[Finding] | None = None,
    steps: tuple[Any, int, Any, Sequence[Finding]] | None = None,
) -> RecordRepair | None:
    """The repairs of a single-call record whose ``kind`` (``output``, ``call``,
    ``request``) is ``value``, judged as the audit judged it (``instruction`` and
    ``context``: a tool an earlier search in them documented is repaired as a tool of
    the list is). ``findings``: the audit's findings of a call judged alone, which the
    decision repairs from; ``steps``: ``(sequence, first, checker, findings)`` for calls
    judged as the next steps of the record's history (:func:`next_steps`)."""
    decider = Decider(scanner, repair="sure")
    alone = _alone(value, kind, findings) if steps is None else None
    if steps is not None:
        seq, first, checker, found = steps
        decisions = decider.decide_steps(seq, first, checker=checker, findings=found)
    elif alone is not None and findings is not None:
        decisions = [
            decider.decide_request(
                alone, instruction=instruction, context=context, findings=findings
            )
        ]
    else:
        text = (
            json.dumps(value, ensure_ascii=False, default=str)
            if kind == "output" and not (isinstance(value, str))
            else value
        )
        decisions = decider.decide(text, instruction=instruction, context=context)
    repairs = [r for d in decisions for r in d.repairs]
    if not repairs:
        return None
    if kind == "output":
        if not isinstance(value, str):
            return None
        if steps is None and alone is None:
            written = decisions[0].text
        else:
            pairs = [(d.original, d.request) for d in decisions if d.original and d.request]
            written = rewrite_output(value, pairs)
        if written is None:
            return None
        read = [d.original for d in decisions]
        return _masked(written, _located(decisions, repairs), scanner, value, read)
    decision = decisions[0]
    if decision.original is None or decision.request is None:
        return None
    written_call = write_call(value, kind, decision.original, decision.request)
    if written_call is None:
        return None
    return _masked(written_call, decision.repairs, scanner, value, [decision.original])


def _alone(value: Any, kind: str, findings: Sequence[Finding] | None) -> ApiRequest | None:
    """The one request of a record judged alone, whose ``findings`` the audit has: the
    decision repairs from them (a program, or several requests, is decided on its own)."""
    from autofeedback._parse._output import to_requests
    from autofeedback.flow._sequence import looks_like_program
    from autofeedback.scanner._scan import is_program

    if findings is None:
        return None
    if kind == "output" and (
        not isinstance(value, str) or is_program(value) or looks_like_program(value)
    ):
        return None
    requests, problem = to_requests(value)
    return requests[0] if problem is None and len(requests) == 1 else None


def _located(decisions: Sequence[Decision], repairs: Sequence[Repair]) -> list[Repair]:
    """The repairs of an output's requests, located as its findings are (under
    ``request[i]`` when it holds several)."""
    if len(decisions) == 1:
        return list(repairs)
    return [
        dataclasses.replace(r, location=(f"request[{i}]", *r.location))
        for i, d in enumerate(decisions)
        for r in d.repairs
    ]


def write_call(value: Any, kind: str, original: ApiRequest, repaired: ApiRequest) -> Any:
    """The record's ``call`` or ``request`` object with ``repaired`` written in."""
    if not isinstance(value, Mapping):
        return None
    if kind == "call":
        return _rewrite_call_object(dict(value), original, repaired)
    out = dict(value)
    if repaired.url != original.url:
        out["url"] = repaired.url
    if repaired.params != original.params:
        out["params"] = dict(repaired.params)
    if repaired.body != original.body:
        key = next((k for k in ("json", "data", "body") if value.get(k) is not None), "json")
        body = repaired.body
        if isinstance(value.get(key), str) and not isinstance(body, str):
            body = json.dumps(body, ensure_ascii=False)
        out[key] = body
    return out


def repair_sequence(
    record: Mapping[str, Any],
    seq: Any,
    checker: Any,
    tools: Any,
    findings: Sequence[Finding],
    source: Any,
) -> RecordRepair | None:
    """The repairs of a sequence record (an ``output`` program, a trace's ``steps`` or a
    chat log's ``messages``), decided from the audit's ``findings`` of it; ``source``:
    what its credentials are read from."""
    decider = Decider(checker.scanner, repair="sure")
    output = record.get("output")
    if "steps" not in record and "messages" not in record and isinstance(output, str):
        decision = decider.decide_program(
            output,
            instruction=record.get("instruction"),
            checker=checker,
            tools=tools,
            responses=record.get("responses"),
            context=seq.dialogue or None,
        )
        if not decision.repairs or decision.text is None:
            return None
        read = [s.request for s in seq.steps]
        return _masked(decision.text, decision.repairs, checker.scanner, source, read)
    decisions = decider.decide_steps(seq, 0, checker=checker, findings=findings)
    changed = {i: d for i, d in enumerate(decisions) if d.repairs and d.original and d.request}
    if not changed:
        return None
    if "steps" in record:
        written = write_steps(record["steps"], changed)
    else:
        written = write_messages(record["messages"], changed)
    if written is None:
        return None
    repairs = [
        dataclasses.replace(r, location=(f"step[{i}]", *r.location))
        for i, d in sorted(changed.items())
        for r in d.repairs
    ]
    read = [s.request for s in seq.steps]
    return _masked(written, repairs, checker.scanner, source, read)


def write_steps(steps: Any, changed: Mapping[int, Decision]) -> list[Any] | None:
    """A trace's ``steps`` with each repaired step's call written in place."""
    if not isinstance(steps, list):
        return None
    out = list(steps)
    for i, d in changed.items():
        step = steps[i] if i < len(steps) else None
        if not isinstance(step, Mapping):
            return None
        assert d.original is not None and d.request is not None
        kind = next((k for k in ("call", "request", "output") if k in step), None)
        if kind is None:
            return None
        if kind == "output":
            value = step["output"]
            if not isinstance(value, str):
                return None
            new: Any = rewrite_output(value, [(d.original, d.request)])
        else:
            new = write_call(step[kind], kind, d.original, d.request)
        if new is None:
            return None
        out[i] = {**step, kind: new}
    return out


def write_messages(messages: Any, changed: Mapping[int, Decision]) -> list[Any] | None:
    """The chat log with each repaired tool call written in place (steps are the
    assistant tool calls, in order)."""
    if not isinstance(messages, list):
        return None
    out: list[Any] = []
    index = 0
    for message in messages:
        if not (isinstance(message, Mapping) and message.get("role") == "assistant"):
            out.append(message)
            continue
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            out.append(message)
            continue
        new_calls = []
        for call in calls:
            d = changed.get(index)
            index += 1
            if d is None:
                new_calls.append(call)
                continue
            assert d.original is not None and d.request is not None
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                return None
            args = dict(d.request.arguments)
            text = isinstance(function.get("arguments"), str)
            new_calls.append(
                {
                    **call,
                    "function": {
                        **function,
                        "name": d.request.name,
                        "arguments": json.dumps(args, ensure_ascii=False) if text else args,
                    },
                }
            )
        out.append({**message, "tool_calls": new_calls})
    return out
