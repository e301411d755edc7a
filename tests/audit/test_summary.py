"""The audit's summary: errors and warnings of a code counted apart, and a headline that
says how many records were clean, had findings or were bad input."""

from __future__ import annotations


def test_audit_summary_counts_errors_and_warnings_apart() -> None:
    from autofeedback import Finding
    from autofeedback.audit._audit import AuditResult, AuditSummary

    summary = AuditSummary()
    warn = Finding("E2.1", ("api",), "a", "b", "doubt", severity="warning")
    error = Finding("E2.1", ("api",), "a", "b", "sure", severity="error")
    summary.add(AuditResult(1, True, (warn,)))
    summary.add(AuditResult(2, False, (error,)))
    summary.add(AuditResult(3, True, (warn,)))
    assert summary.severity_rows() == [("E2.1", summary.code_rows()[0][1], 1, 2)]
    assert summary.headline() == "3 records: 2 clean, 1 with findings, 0 bad input lines"
