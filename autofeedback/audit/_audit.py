"""Offline audit of logged requests: one JSON object per line in, one result per line
out, in order; a line that cannot be read becomes an error result, never a gap.

Input record (JSONL): optional ``id``, optional ``instruction``, optional ``context``
(every other text the model saw, a system prompt and earlier turns: a value it gives is
grounded, and a tool a search in it documented is callable), optional ``tools`` (an
OpenAI tool list for this record; Anthropic, Gemini, Bedrock and Responses tool
definitions are read too), optional ``history`` (the conversation before the call, in
any provider's shape: with earlier tool calls in it, the call is checked as their next
step, E5 included), and exactly one of ``output`` (raw LLM text), ``call`` (``{"name",
"arguments"}``) or ``request`` (``{"method", "url", "params", "headers", "json",
"data"}``).

A record may also hold a sequence (:mod:`autofeedback.flow`): ``steps`` (a trace:
``[{"call" | "request" | "output": ..., "response": {"status", "body"}}]``), ``messages``
(an OpenAI chat log with ``tool_calls`` and ``tool`` answers), or an ``output`` program
with variables (``r = F(q="x")\nG(id=r.results[0].id)``), optionally with ``responses``
(GraphQL SDL text or a mapping from tool name to JSON Schema): each step is checked as a
call (E1-E4) and the data flow between them (E5).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback._parse._common import json_reason
from autofeedback._parse._streams import assemble_stream, is_stream
from autofeedback.audit._at_sight import clean_at_sight
from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.checks._check_name import name_with_values
from autofeedback.checks._names import closest_literal
from autofeedback.core._cache import content_key
from autofeedback.core._exceptions import SpecError
from autofeedback.core._findings import CODES, Finding, Repair
from autofeedback.core._redact import redact, value_secrets
from autofeedback.scanner._scan import _PRELOAD_FROM, Scanner, one_line

__all__ = ["AuditResult", "AuditSummary", "Unit", "audit_lines", "audit_record", "audit_units"]

_KINDS = ("output", "call", "request")
#: keys of a chat-completion log line (``audit --input-format openai``), never of a record
_OPENAI_LINE = frozenset({"response", "choices", "custom_id"})
#: the error of a record that needs ``--spec`` when none was given; the CLI reports it
#: once, as bad options, instead of once per record
NO_SPEC = "record has no 'tools' and no --spec was given"
_MAX_LINE = 8 * 1024 * 1024
_MAX_KEPT_TOOLS = 16 * 1024 * 1024
#: tool lists whose key is remembered by identity (a read-ahead window is 64 records)
_MAX_KEYS = 128
#: What a record holds that documents the APIs rather than carries what was sent: no
#: credential is registered from it. A tool list's ``token`` property has the type
#: ``string`` and a description, which are no secrets (and walking every tool list
#: cost a fifth of an audit of many distinct lists).
_DOCUMENTATION = frozenset({"id", "tools", "responses"})


@dataclass(frozen=True)
class AuditResult:
    """The verdict on one input line. ``error`` is set when the line itself is bad."""

    id: Any
    ok: bool
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    line: int = 0
    operations: tuple[str, ...] = ()
    #: with ``fix``: the record's call written again with the certain repairs, in the
    #: shape the record gave it (``None`` when nothing was repaired), and the repairs
    repaired: Any = None
    repairs: tuple[Repair, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"id": self.id, "ok": False, "error": self.error}
        out = {"id": self.id, "ok": self.ok, "findings": [f.as_dict() for f in self.findings]}
        if self.repairs:
            out["repaired"] = self.repaired
            out["repairs"] = [r.as_dict() for r in self.repairs]
        return out


@dataclass
class AuditSummary:
    """Counts over a whole audit, per finding code and per operation."""

    records: int = 0
    clean: int = 0
    bad_lines: int = 0
    by_code: Counter[str] = field(default_factory=Counter)
    by_operation: Counter[str] = field(default_factory=Counter)
    #: ``(operation, code) -> count``: the per-operation breakdown reports show.
    by_operation_code: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: ``code -> count`` of the findings that are warnings (the rest are errors)
    warnings_by_code: Counter[str] = field(default_factory=Counter)
    #: records written again with repairs (``fix``), and the repairs per code
    repaired: int = 0
    repairs_by_code: Counter[str] = field(default_factory=Counter)

    def add(self, result: AuditResult) -> None:
        self.records += 1
        if result.error is not None:
            self.bad_lines += 1
            return
        if result.ok:
            self.clean += 1
        if result.repairs:
            self.repaired += 1
            self.repairs_by_code.update(r.code for r in result.repairs)
        for f in result.findings:
            self.by_code[f.code] += 1
            if f.severity != "error":
                self.warnings_by_code[f.code] += 1
            op = f.operation or "(unresolved)"
            self.by_operation[op] += 1
            self.by_operation_code[op, f.code] += 1

    @property
    def exit_code(self) -> int:
        """0 clean, 1 findings, 2 bad input lines."""
        if self.bad_lines:
            return 2
        return 0 if self.clean == self.records else 1

    def code_rows(self) -> list[tuple[str, str, int]]:
        return [(c, CODES[c], self.by_code[c]) for c in CODES if self.by_code[c]]

    def severity_rows(self) -> list[tuple[str, str, int, int]]:
        """``(code, title, errors, warnings)`` in the paper's order: a warning is the
        scanner's doubt, never counted as an error."""
        return [
            (c, t, n - self.warnings_by_code[c], self.warnings_by_code[c])
            for c, t, n in self.code_rows()
        ]

    def headline(self) -> str:
        """``"13 records: 5 clean, 7 with findings, 1 bad input line"``."""
        with_findings = self.records - self.clean - self.bad_lines
        bad = "line" if self.bad_lines == 1 else "lines"
        noun = "record" if self.records == 1 else "records"
        line = (
            f"{self.records} {noun}: {self.clean} clean, {with_findings} with findings, "
            f"{self.bad_lines} bad input {bad}"
        )
        if self.repaired:
            line += f"; {self.repaired} repaired"
        return line

    def operation_rows(self) -> list[tuple[str, int, str]]:
        """``(operation, findings, "E3.2×2, E4.1×1")``, most findings first."""
        rows = []
        for op, count in sorted(self.by_operation.items(), key=lambda kv: (-kv[1], kv[0])):
            codes = ", ".join(
                f"{c}×{self.by_operation_code[op, c]}"
                for c in CODES
                if self.by_operation_code[op, c]
            )
            rows.append((op, count, codes))
        return rows


class _CatalogCache:
    """Per-record ``tools`` are usually the same few lists: load each once."""

    def __init__(self, base: ApiCatalog | None, retriever: Any = "auto", fix: bool = False) -> None:
        self.base = base
        #: write each record's repaired call (``audit --fix``)
        self.fix = fix
        self._scanners: dict[str, Scanner] = {}
        self._base_scanner: Scanner | None = None
        self._kept = 0  # characters of the tool lists behind ``_scanners``
        self.retriever = retriever
        self._checkers: dict[tuple[int, str], tuple[Scanner, Any]] = {}
        # the key of the tool lists met lately, by identity: the read-ahead's prefetch
        # and the audit ask for the same record's list, whose canonical JSON (sorted
        # keys) and hash were half of a clean record's cost, computed twice
        self._keys: dict[int, tuple[Any, str, int]] = {}
        self._keyed = 0  # characters of the lists held by ``_keys``
        # the read-ahead's verdicts of :func:`clean_at_sight` on the records of its window,
        # by identity, each taken back by the audit of its record
        self._at_sight: dict[int, tuple[Any, bool]] = {}

    def clean_at_sight(self, record: Any) -> bool:
        """Whether ``record`` is a call record clean at sight (:mod:`._at_sight`): its
        tool list is never loaded. Never with a base catalog (``--spec``), whose
        operations the record's tools join."""
        if self.base is not None:
            return False
        hit = self._at_sight.pop(id(record), None)
        if hit is not None and hit[0] is record:
            return bool(hit[1])
        return clean_at_sight(record)

    def _read_ahead(self, record: Any) -> bool:
        """:meth:`clean_at_sight` for the read-ahead, kept for the record's audit."""
        clean = self.clean_at_sight(record)
        if len(self._at_sight) >= _MAX_KEYS:
            self._at_sight.clear()  # records whose audit never came (bounded all the same)
        self._at_sight[id(record)] = (record, clean)
        return clean

    def sequence_checker(self, scanner: Scanner, responses: Any, build: Any) -> Any:
        """The sequence checker for ``scanner`` and a record's ``responses`` (built once:
        the data-flow graph of a catalog is the costly part)."""
        key = (id(scanner), content_key(responses)[0])
        hit = self._checkers.get(key)
        if hit is None or hit[0] is not scanner:  # an id reused after the cache was cleared
            if len(self._checkers) > 256:
                self._checkers.clear()
            hit = self._checkers[key] = (scanner, build(scanner, responses))
        return hit[1]

    def scanner(self, tools: Any) -> Scanner:
        if tools is None:
            if self.base is None:
                raise SpecError(NO_SPEC, source="<audit>")
            if self._base_scanner is None:
                self._base_scanner = Scanner(self.base, retriever=self.retriever)
            return self._base_scanner
        known = self._keys.get(id(tools))
        if known is not None and known[0] is tools:
            key, size = known[1], known[2]
        else:
            key, size = content_key(tools)
            # bounded by count and by size, as the scanners are
            if len(self._keys) >= _MAX_KEYS or self._keyed + size > _MAX_KEPT_TOOLS:
                self._keys.clear()
                self._keyed = 0
            self._keys[id(tools)] = (tools, key, size)
            self._keyed += size
        hit = self._scanners.get(key)
        if hit is None:
            from autofeedback._parse._providers import provider_tools

            # Anthropic, Gemini, Bedrock and Responses tool definitions read as OpenAI's
            catalog = ApiCatalog.from_tools(provider_tools(tools), source="<record tools>")
            if self.base is not None:
                catalog = ApiCatalog.merge(catalog, self.base)
            # bounded by count and by size: a log of distinct 8 MiB tool lists must not
            # keep a thousand of them (memory stays constant for any record under the cap)
            if len(self._scanners) > 1024 or self._kept + size > _MAX_KEPT_TOOLS:
                self._scanners.clear()
                self._kept = 0
            self._kept += size
            hit = self._scanners[key] = Scanner(catalog, retriever=self.retriever)
        return hit

    def prefetch(self, records: Iterable[Any]) -> None:
        """Embed in one batch the names the semantic checks of ``records`` will compare:
        the unknown API or argument names of plain call records (those no exact or
        literal match explains) with their candidates (the catalog's API names, or the
        operation's parameters). Only a hint: a name it misses is embedded when checked,
        one it adds costs nothing but its embedding, and a record it cannot read is left
        to the audit, which reports it."""
        names: list[str] = []
        catalogs: list[ApiCatalog] = []
        retriever: Any = None
        for record in records:
            try:
                found = self._semantic_names(record)
            except Exception:
                continue  # the audit of this record says what is wrong with it
            if found is None:
                continue
            scanner, wanted, candidates = found
            if retriever is None:
                retriever = scanner.retriever
            elif scanner.retriever is not retriever:
                continue  # one batch per retriever; this one's names are embedded later
            names += wanted
            if len(candidates) >= _PRELOAD_FROM:
                catalogs.append(scanner.catalog)  # as the check will: the whole catalog
            else:
                names += candidates
        prefetch = getattr(retriever, "prefetch", None)
        if names and callable(prefetch):
            prefetch(names, catalogs)

    def _semantic_names(self, record: Any) -> tuple[Scanner, list[str], list[str]] | None:
        """The scanner of a plain call record, the names its checks will compare, and
        what they are compared with."""
        if not isinstance(record, Mapping) or "call" not in record or "instruction" in record:
            return None
        if self._read_ahead(record):
            return None  # clean at sight: no name to compare, no catalog to build
        if any(k in record for k in ("output", "request", "steps", "messages")):
            return None
        call = record["call"]
        if type(call) is not dict or len(call) != 2:
            return None
        name, arguments = call.get("name"), call.get("arguments")
        if not isinstance(name, str) or type(arguments) is not dict:
            return None
        tools = record.get("tools")
        if tools is None and self.base is None:
            return None
        scanner = self.scanner(tools)
        if scanner._retriever is None:
            return None
        catalog = scanner.catalog
        op = catalog.get(name)
        if op is None:
            names = list(catalog.names)
            if not names or closest_literal(name, names) or name_with_values(name, catalog):
                return None
            return scanner, [name], names
        params = [p.name for p in op.parameters]
        unknown = [
            a
            for a in arguments
            if isinstance(a, str) and op.parameter(a) is None and not closest_literal(a, params)
        ]
        return (scanner, unknown, params) if unknown and params else None


def audit_record(record: Any, line: int, cache: _CatalogCache) -> AuditResult:
    """Audit one decoded record; every problem with the record itself becomes ``error``.

    Nothing a record holds can stop an audit: any exception while resolving its tools,
    parsing, checking or redacting it becomes this record's ``error`` (one line, with
    credentials masked), and the audit goes on with the next one.
    """
    try:
        return _audit_record(record, line, cache)
    except Exception as exc:
        return AuditResult(
            _record_id(record, line),
            False,
            error=str(redact(f"the record could not be checked: {one_line(exc)}")),
            line=line,
        )


def _record_id(record: Any, line: int) -> Any:
    rid = record.get("id", line) if isinstance(record, Mapping) else line
    if isinstance(rid, str):
        # an id is shown in every report: "Bearer ...", or a credential the record
        # also sends, is masked there like anywhere else
        secrets = value_secrets([v for k, v in record.items() if k not in _DOCUMENTATION])
        rid = str(redact(rid, secrets=secrets))
    if rid is None or isinstance(rid, (str, int, float, bool)):
        return rid if not isinstance(rid, str) or len(rid) <= 200 else rid[:200] + "..."
    return line  # an id must be a scalar a report can show; the line number is one


def _holds_sequence(record: Mapping[str, Any]) -> bool:
    """:func:`~autofeedback.flow._sequence.is_sequence_record`, whose package (14 ms of
    import) only records with ``steps`` or an ``output`` text can need."""
    if "steps" not in record and not isinstance(record.get("output"), str):
        return False
    from autofeedback.flow._sequence import is_sequence_record

    return is_sequence_record(record)


def _audit_record(record: Any, line: int, cache: _CatalogCache) -> AuditResult:
    if not isinstance(record, Mapping):
        return AuditResult(line, False, error="record is not a JSON object", line=line)
    rid = _record_id(record, line)
    if cache.clean_at_sight(record):
        return AuditResult(rid, True, line=line)
    if "messages" in record or _holds_sequence(record):
        return _audit_sequence(record, rid, line, cache)
    kinds = [k for k in _KINDS if k in record]
    if _OPENAI_LINE & record.keys():
        # a chat-completion log line among JSONL records: say how to read it
        return AuditResult(
            rid,
            False,
            error="record is an OpenAI chat-completion log line (request/response), not an "
            "audit record: audit the log with --input-format openai",
            line=line,
        )
    if len(kinds) != 1:
        want = "exactly one of 'output', 'call', 'request', or a sequence ('steps', 'messages')"
        got = ", ".join(repr(k) for k in kinds) or "none"
        return AuditResult(rid, False, error=f"record needs {want} (got {got})", line=line)
    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        return AuditResult(rid, False, error="'instruction' must be a string", line=line)
    context = record.get("context")
    if context is not None and not isinstance(context, str):
        return AuditResult(rid, False, error="'context' must be a string", line=line)
    try:
        scanner = cache.scanner(record.get("tools"))
    except SpecError as exc:
        reason = str(redact(" ".join(exc.reason.split())[:300]))
        return AuditResult(rid, False, error=f"bad 'tools': {reason}", line=line)
    value = record[kinds[0]]
    if kinds[0] == "output" and is_stream(value) and not isinstance(value, str):
        # the events of a streamed answer: read as the response they make up
        try:
            value = assemble_stream(value)
        except ValueError as exc:
            return AuditResult(rid, False, error=f"'output' stream: {exc}", line=line)
    if kinds[0] == "output" and isinstance(value, (Mapping, list)):
        # a provider's message or response as logged (Anthropic, Gemini, Responses...):
        # read as the JSON text the model's API returned
        value = json.dumps(value, ensure_ascii=False, default=str)
    if kinds[0] == "output" and not isinstance(value, str):
        return AuditResult(
            rid, False, error="'output' must be a string or a JSON message", line=line
        )
    if kinds[0] != "output" and not isinstance(value, Mapping):
        return AuditResult(rid, False, error=f"'{kinds[0]}' must be a JSON object", line=line)
    history = record.get("history")
    if history is not None and not isinstance(history, list):
        return AuditResult(rid, False, error="'history' must be a list of messages", line=line)
    after = _after_history(value, history, scanner, cache, context) if history else None
    if after is not None:
        findings, steps = after
    else:
        steps = None
        findings = tuple(
            scanner.iter_findings(value, instruction=instruction, context=context, on_error="raise")
        )
    ok = not any(f.severity == "error" for f in findings)
    ops = tuple(dict.fromkeys(f.operation for f in findings if f.operation))
    result = AuditResult(rid, ok, findings, line=line, operations=ops)
    if cache.fix and not ok:
        # the one decision on the record's call(s), made from the findings above
        from autofeedback.decide._records import repair_record

        alone = findings if steps is None else None
        fixed = repair_record(
            record[kinds[0]], kinds[0], scanner, instruction, context, findings=alone, steps=steps
        )
        result = _with_repair(result, fixed)
    return result


def _with_repair(result: AuditResult, fixed: Any) -> AuditResult:
    """``result`` with a record's repairs (:class:`~autofeedback.decide._records.RecordRepair`):
    the record written again, each repaired finding carrying its ``fix``."""
    if fixed is None:
        return result
    from autofeedback.decide import with_fixes

    return dataclasses.replace(
        result,
        findings=tuple(with_fixes(result.findings, fixed.fixes)),
        repaired=fixed.repaired,
        repairs=fixed.repairs,
    )


def _after_history(
    value: Any, history: list[Any], scanner: Scanner, cache: _CatalogCache, context: str | None
) -> tuple[tuple[Finding, ...], tuple[Any, int, Any, list[Finding]]] | None:
    """The findings of a record's call(s) checked as the next steps after its
    ``history`` (the conversation the request carried: an id that no earlier tool result
    returned is E5.3, a tool an earlier result documented is callable), as the proxy and
    ``check_tool_calls(history=)`` check them, and what the decision on them is made
    from (the sequence, the index of its first new step, the checker, its findings);
    ``None`` when the history holds no earlier tool call (the call is then judged
    alone) or the value holds no readable request. ``context``: the record's (a chat
    log's system prompt given apart from its messages), grounding values as the
    history does."""
    from autofeedback._parse._output import to_requests
    from autofeedback.decide._records import next_steps
    from autofeedback.scanner._sequences import has_tool_steps, sequence_checker

    if not has_tool_steps(history):
        return None
    requests, problem = to_requests(value)
    if problem is not None or not requests:
        return None  # its E1 comes from the single-call path
    checker = cache.sequence_checker(scanner, None, sequence_checker)
    seq, first, found = next_steps(checker, history, list(requests), context)
    # the findings of the new steps, located as a single call's are (the earlier steps
    # were judged already)
    per_request: list[list[Finding]] = [[] for _ in requests]
    for f in found:
        head = f.location[0] if f.location else ""
        if not head.startswith("step["):
            continue
        index = int(head[5:-1])
        if first <= index < first + len(requests):
            per_request[index - first].append(dataclasses.replace(f, location=f.location[1:]))
    steps = (seq, first, checker, found)
    if len(per_request) == 1:
        return tuple(per_request[0]), steps
    located = tuple(
        dataclasses.replace(f, location=(f"request[{i}]", *f.location))
        for i, request_findings in enumerate(per_request)
        for f in request_findings
    )
    return located, steps


def _audit_sequence(
    record: Mapping[str, Any], rid: Any, line: int, cache: _CatalogCache
) -> AuditResult:
    from autofeedback.flow._sequence import sequence_from_chat, sequence_from_record
    from autofeedback.scanner._sequences import sequence_checker

    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        return AuditResult(rid, False, error="'instruction' must be a string", line=line)
    tools = record.get("tools")
    if isinstance(tools, str):  # GraphQL-RestBench keeps its function_specs as JSON text
        try:
            tools = json.loads(tools)
        except (json.JSONDecodeError, RecursionError):
            return AuditResult(rid, False, error="bad 'tools': not valid JSON", line=line)
    try:
        scanner = cache.scanner(tools)
    except SpecError as exc:
        reason = str(redact(" ".join(exc.reason.split())[:300]))
        return AuditResult(rid, False, error=f"bad 'tools': {reason}", line=line)
    if "steps" not in record and "messages" in record:
        messages = record["messages"]
        if not isinstance(messages, list):
            return AuditResult(rid, False, error="'messages' must be a list", line=line)
        seq = sequence_from_chat(messages)
        if instruction is not None:
            seq = dataclasses.replace(seq, instruction=instruction)
    else:
        try:
            seq = sequence_from_record(record)
        except ValueError as exc:
            return AuditResult(rid, False, error=str(exc), line=line)
    try:
        checker = cache.sequence_checker(scanner, record.get("responses"), sequence_checker)
    except ValueError as exc:
        return AuditResult(rid, False, error=f"bad 'responses': {one_line(exc)}", line=line)
    findings = tuple(checker.iter_findings(seq))
    ok = not any(f.severity == "error" for f in findings)
    ops = tuple(dict.fromkeys(f.operation for f in findings if f.operation))
    result = AuditResult(rid, ok, findings, line=line, operations=ops)
    if cache.fix and not ok:
        # the one decision on the sequence, made from the findings above
        from autofeedback.decide._records import repair_sequence

        source = [v for k, v in record.items() if k not in _DOCUMENTATION]
        fixed = repair_sequence(record, seq, checker, tools, result.findings, source)
        result = _with_repair(result, fixed)
    return result


def audit_lines(
    lines: Iterable[str | bytes],
    catalog: ApiCatalog | None,
    *,
    retriever: Any = "auto",
    start: int = 1,
    fix: bool = False,
    lookahead: int = 0,
) -> Iterator[AuditResult]:
    """Audit a JSONL stream lazily, in order, in constant memory.

    ``fix``: each record with errors is also repaired where the docs leave one answer
    (:mod:`autofeedback.decide`); its result then carries ``repaired``, the record's
    call written again in its own shape, and ``repairs``.

    Blank lines (a trailing newline, an empty line between records) are skipped, as jq
    and pandas skip them; every other line gets exactly one result.

    ``start`` is the number of the first line (a partition of a bigger log keeps the
    line numbers, and so the default ids, of the whole file).

    ``lookahead``: read up to that many records ahead, so that the names their semantic
    checks compare are embedded in one batch (:meth:`_CatalogCache.prefetch`); the
    results are the same. For a file: on a live stream a result then waits for the
    lines after it.

    >>> catalog = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> [r.ok for r in audit_lines(['{"call": {"name": "ping", "arguments": {}}}', 'oops'],
    ...                            catalog, retriever=None)]
    [True, False]
    """
    cache = _CatalogCache(catalog, retriever, fix)
    decoded = _decoded(lines, start)
    if lookahead <= 1:
        for number, item in decoded:
            yield item if isinstance(item, AuditResult) else audit_record(item, number, cache)
        return
    while True:
        window = list(itertools.islice(decoded, lookahead))
        if not window:
            return
        cache.prefetch(item for _, item in window if not isinstance(item, AuditResult))
        for number, item in window:
            yield item if isinstance(item, AuditResult) else audit_record(item, number, cache)


def _decoded(lines: Iterable[str | bytes], start: int) -> Iterator[tuple[int, Any]]:
    """``(line number, record)`` per non-blank line, or the line's error result."""
    for number, raw in enumerate(lines, start=start):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if number == start:
            text = text.removeprefix("\ufeff")  # a BOM is no part of the first record
        if not text.strip():
            continue
        if len(text) > _MAX_LINE:
            yield (
                number,
                AuditResult(
                    number, False, error=f"line longer than {_MAX_LINE} bytes", line=number
                ),
            )
            continue
        try:
            # without its line break, an error at the end of the line gets its own column
            record = json.loads(text.rstrip("\r\n"))
        except Exception as exc:
            yield number, AuditResult(number, False, error=_json_error(exc), line=number)
            continue
        yield number, record


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {json_reason(exc)} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "not valid JSON: nested too deeply"
    return f"not valid JSON: {one_line(exc)}"


@dataclass(frozen=True)
class Unit:
    """One decoded input unit from a non-JSONL reader (HAR entry, chat-log tool call).

    ``record`` follows the JSONL record contract; ``error`` marks a unit that could not
    be read (it becomes an error result, never a gap). ``line`` is where it starts.
    """

    line: int
    record: Any = None
    error: str | None = None
    id: Any = None


def audit_units(
    units: Iterable[Unit], catalog: ApiCatalog | None, *, retriever: Any = "auto", fix: bool = False
) -> Iterator[AuditResult]:
    """Audit already-decoded records (see :mod:`autofeedback.audit._inputs`), lazily, in order.

    >>> catalog = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> units = [Unit(1, {"call": {"name": "ping", "arguments": {}}}), Unit(2, error="bad")]
    >>> [(r.ok, r.error) for r in audit_units(units, catalog, retriever=None)]
    [(True, None), (False, 'bad')]
    """
    cache = _CatalogCache(catalog, retriever, fix)
    for unit in units:
        rid = unit.id if unit.id is not None else unit.line
        if isinstance(rid, str):
            rid = str(redact(rid))
        if unit.error is not None:
            yield AuditResult(rid, False, error=unit.error, line=unit.line)
            continue
        yield audit_record(unit.record, unit.line, cache)
