"""The audit's report formats, chosen by ``--format``: text, json and jsonl here; junit,
sarif and html from :mod:`autofeedback.audit._reports`, imported when chosen."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from autofeedback.audit._audit import AuditResult, AuditSummary


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
