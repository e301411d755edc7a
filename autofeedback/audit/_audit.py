"""Offline audit of logged requests: one JSON object per line in, one result per line
out, in order; a line that cannot be read becomes an error result, never a gap.

Input record (JSONL): optional ``id``, optional ``instruction``, optional ``tools`` (an
OpenAI tool list for this record), and exactly one of ``output`` (raw LLM text),
``call`` (``{"name", "arguments"}``) or ``request`` (``{"method", "url", "params",
"headers", "json", "data"}``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback._catalog import ApiCatalog
from autofeedback._exceptions import SpecError
from autofeedback._findings import CODES, Finding
from autofeedback._redact import redact
from autofeedback._scan import Scanner, one_line

__all__ = ["AuditResult", "AuditSummary", "Unit", "audit_lines", "audit_record", "audit_units"]

_KINDS = ("output", "call", "request")
_MAX_LINE = 8 * 1024 * 1024


@dataclass(frozen=True)
class AuditResult:
    """The verdict on one input line. ``error`` is set when the line itself is bad."""

    id: Any
    ok: bool
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    line: int = 0
    operations: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"id": self.id, "ok": False, "error": self.error}
        return {"id": self.id, "ok": self.ok, "findings": [f.as_dict() for f in self.findings]}


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

    def add(self, result: AuditResult) -> None:
        self.records += 1
        if result.error is not None:
            self.bad_lines += 1
            return
        if result.ok:
            self.clean += 1
        for f in result.findings:
            self.by_code[f.code] += 1
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

    def __init__(self, base: ApiCatalog | None, retriever: Any = "auto") -> None:
        self.base = base
        self._scanners: dict[str, Scanner] = {}
        self._base_scanner: Scanner | None = None
        self.retriever = retriever

    def scanner(self, tools: Any) -> Scanner:
        if tools is None:
            if self.base is None:
                raise SpecError("record has no 'tools' and no --spec was given", source="<audit>")
            if self._base_scanner is None:
                self._base_scanner = Scanner(self.base, retriever=self.retriever)
            return self._base_scanner
        key = hashlib.sha256(json.dumps(tools, sort_keys=True, default=str).encode()).hexdigest()
        hit = self._scanners.get(key)
        if hit is None:
            catalog = ApiCatalog.from_tools(tools, source="<record tools>")
            if self.base is not None:
                catalog = ApiCatalog.merge(catalog, self.base)
            if len(self._scanners) > 1024:
                self._scanners.clear()
            hit = self._scanners[key] = Scanner(catalog, retriever=self.retriever)
        return hit


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
    if rid is None or isinstance(rid, (str, int, float, bool)):
        return rid if not isinstance(rid, str) or len(rid) <= 200 else rid[:200] + "..."
    return line  # an id must be a scalar a report can show; the line number is one


def _audit_record(record: Any, line: int, cache: _CatalogCache) -> AuditResult:
    if not isinstance(record, Mapping):
        return AuditResult(line, False, error="record is not a JSON object", line=line)
    rid = _record_id(record, line)
    kinds = [k for k in _KINDS if k in record]
    if len(kinds) != 1:
        want = "exactly one of 'output', 'call', 'request'"
        got = ", ".join(repr(k) for k in kinds) or "none"
        return AuditResult(rid, False, error=f"record needs {want} (got {got})", line=line)
    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        return AuditResult(rid, False, error="'instruction' must be a string", line=line)
    try:
        scanner = cache.scanner(record.get("tools"))
    except SpecError as exc:
        reason = str(redact(" ".join(exc.reason.split())[:300]))
        return AuditResult(rid, False, error=f"bad 'tools': {reason}", line=line)
    value = record[kinds[0]]
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
    findings = tuple(scanner.iter_findings(value, instruction=instruction, on_error="raise"))
    ok = not any(f.severity == "error" for f in findings)
    ops = tuple(dict.fromkeys(f.operation for f in findings if f.operation))
    return AuditResult(rid, ok, findings, line=line, operations=ops)


def audit_lines(
    lines: Iterable[str | bytes],
    catalog: ApiCatalog | None,
    *,
    retriever: Any = "auto",
    start: int = 1,
) -> Iterator[AuditResult]:
    """Audit a JSONL stream lazily, in order, in constant memory.

    ``start`` is the number of the first line (a partition of a bigger log keeps the
    line numbers, and so the default ids, of the whole file).

    >>> catalog = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> [r.ok for r in audit_lines(['{"call": {"name": "ping", "arguments": {}}}', 'oops'],
    ...                            catalog, retriever=None)]
    [True, False]
    """
    cache = _CatalogCache(catalog, retriever)
    for number, raw in enumerate(lines, start=start):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if not text.strip():
            yield AuditResult(number, False, error="empty line", line=number)
            continue
        if len(text) > _MAX_LINE:
            yield AuditResult(
                number, False, error=f"line longer than {_MAX_LINE} bytes", line=number
            )
            continue
        try:
            record = json.loads(text)
        except Exception as exc:
            yield AuditResult(number, False, error=_json_error(exc), line=number)
            continue
        yield audit_record(record, number, cache)


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at column {exc.colno}"
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
    units: Iterable[Unit], catalog: ApiCatalog | None, *, retriever: Any = "auto"
) -> Iterator[AuditResult]:
    """Audit already-decoded records (see :mod:`autofeedback.audit._inputs`), lazily, in order.

    >>> catalog = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object",
    ...     "properties": {}}}])
    >>> units = [Unit(1, {"call": {"name": "ping", "arguments": {}}}), Unit(2, error="bad")]
    >>> [(r.ok, r.error) for r in audit_units(units, catalog, retriever=None)]
    [(True, None), (False, 'bad')]
    """
    cache = _CatalogCache(catalog, retriever)
    for unit in units:
        rid = unit.id if unit.id is not None else unit.line
        if unit.error is not None:
            yield AuditResult(rid, False, error=unit.error, line=unit.line)
            continue
        yield audit_record(unit.record, unit.line, cache)
