"""``audit --fix``: a record's call written again with its certain repairs, in the shape
the record gave it.

The repairs are the decision's (:mod:`autofeedback.decide`), the same every entry point
applies. The record keeps its shape: a ``call`` stays a ``{"name", "arguments"}`` object
(with its own key names, and arguments a JSON string where they were one), a ``request``
stays a request object, an ``output`` stays text in its own format (a program stays a
program), a trace's ``steps`` and a chat log's ``messages`` keep every step and message,
the repaired calls written in place. Where a repaired call cannot be written back in its
format, the record is reported as it was (no ``repaired``, no ``fix``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from autofeedback._findings import Repair
from autofeedback._model import ApiRequest
from autofeedback._redact import redact, redact_repair, value_secrets
from autofeedback._scan import Scanner
from autofeedback.audit._audit import _DOCUMENTATION, AuditResult
from autofeedback.decide import Decider, Decision, with_fixes
from autofeedback.decide._render import rewrite_output

__all__ = ["fix_record", "fix_sequence"]


def _done(
    result: AuditResult, repaired: Any, repairs: Sequence[Repair], scanner: Scanner, source: Any
) -> AuditResult:
    """``result`` with the repaired call as every report shows it: credentials masked
    (the names a credential goes by, the spec's ``securitySchemes`` included, and every
    credential value ``source``, the record, carries, wherever it is repeated)."""
    names = scanner._auth_names
    shown = redact(repaired, names=names, secrets=value_secrets(source, names))
    return dataclasses.replace(
        result,
        findings=tuple(with_fixes(result.findings, repairs)),
        repaired=shown,
        repairs=tuple(redact_repair(r, names=names) for r in repairs),
    )


def _calls(record: Mapping[str, Any]) -> list[Any]:
    """What a record's credentials are read from: all of it but its documentation."""
    return [v for k, v in record.items() if k not in _DOCUMENTATION]


def fix_record(
    result: AuditResult,
    value: Any,
    kind: str,
    scanner: Scanner,
    instruction: str | None,
    context: str | None = None,
) -> AuditResult:
    """``result`` with ``repaired`` and ``repairs`` for a single-call record whose
    ``kind`` (``output``, ``call``, ``request``) is ``value``; judged as the audit judged
    it (``instruction`` and ``context``: a tool an earlier search in them documented is
    repaired as a tool of the list is)."""
    decider = Decider(scanner, repair="sure")
    text = (
        json.dumps(value, ensure_ascii=False, default=str)
        if kind == "output" and not (isinstance(value, str))
        else value
    )
    decisions = decider.decide(text, instruction=instruction, context=context)
    repairs = [r for d in decisions for r in d.repairs]
    if not repairs:
        return result
    if kind == "output":
        written = decisions[0].text if isinstance(value, str) else None
        if written is None:
            return result
        return _done(result, written, _located(decisions, repairs), scanner, value)
    decision = decisions[0]
    if decision.original is None or decision.request is None:
        return result
    written_call = _write(value, kind, decision.original, decision.request)
    if written_call is None:
        return result
    return _done(result, written_call, decision.repairs, scanner, value)


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


def _write(value: Any, kind: str, original: ApiRequest, repaired: ApiRequest) -> Any:
    """The record's ``call`` or ``request`` object with ``repaired`` written in."""
    if not isinstance(value, Mapping):
        return None
    if kind == "call":
        from autofeedback.decide._render import _rewrite_call_object

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


def fix_sequence(
    result: AuditResult, record: Mapping[str, Any], seq: Any, checker: Any, tools: Any
) -> AuditResult:
    """``result`` with ``repaired`` and ``repairs`` for a sequence record: an ``output``
    program, a trace's ``steps`` or a chat log's ``messages``."""
    decider = Decider(checker.scanner, repair="sure")
    output = record.get("output")
    if "steps" not in record and "messages" not in record and isinstance(output, str):
        decision = decider.decide_program(
            output,
            instruction=record.get("instruction"),
            checker=checker,
            tools=tools,
            responses=record.get("responses"),
        )
        if not decision.repairs or decision.text is None:
            return result
        return _done(result, decision.text, decision.repairs, checker.scanner, _calls(record))
    decisions = decider.decide_steps(seq, 0, checker=checker, findings=result.findings)
    changed = {i: d for i, d in enumerate(decisions) if d.repairs and d.original and d.request}
    if not changed:
        return result
    if "steps" in record:
        written = _write_steps(record["steps"], changed)
    else:
        written = _write_messages(record["messages"], changed)
    if written is None:
        return result
    repairs = [
        dataclasses.replace(r, location=(f"step[{i}]", *r.location))
        for i, d in sorted(changed.items())
        for r in d.repairs
    ]
    return _done(result, written, repairs, checker.scanner, _calls(record))


def _write_steps(steps: Any, changed: Mapping[int, Decision]) -> list[Any] | None:
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
            new = _write(step[kind], kind, d.original, d.request)
        if new is None:
            return None
        out[i] = {**step, kind: new}
    return out


def _write_messages(messages: Any, changed: Mapping[int, Decision]) -> list[Any] | None:
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
