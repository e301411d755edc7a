"""Audit reports for people and CI: JUnit XML, SARIF 2.1.0 and a one-file HTML page.

Every formatter has the ``record(result)`` / ``finish(summary)`` shape of the CLI's
formatters. They keep memory constant on any log: SARIF streams its results; JUnit
needs its totals before the test cases, so the cases are spooled (to disk once large)
and copied after the header; HTML keeps only counters and the first rows of its table.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import tempfile
from typing import IO, Any
from urllib.parse import quote

from autofeedback.audit._audit import AuditResult, AuditSummary
from autofeedback.core._findings import CODES

__all__ = ["HtmlReport", "JunitReport", "SarifReport"]

_TOOL = "autofeedback"
_INFO = "https://github.com/autofeedback/autofeedback"  # only text in the report, never fetched
_BAD_INPUT = "input"
# XML 1.0 forbids most control characters even when escaped; model output has them.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class _Report:
    def __init__(self, out: IO[str], source: str = "-") -> None:
        self.out = out
        self.source = source

    def record(self, result: AuditResult) -> None: ...

    def finish(self, summary: AuditSummary) -> None: ...


# -- JUnit -----------------------------------------------------------------------------


def _x(text: Any) -> str:
    return html.escape(_XML_BAD.sub("\ufffd", str(text)), quote=True)


class JunitReport(_Report):
    """JUnit XML: a test case per record, a ``<failure>`` per error finding.

    Warnings do not fail a record; they go to the case's ``<system-out>``. An input
    line that cannot be read is an ``<error>``.
    """

    def __init__(self, out: IO[str], source: str = "-") -> None:
        super().__init__(out, source)
        # closed in finish(); a context manager cannot span record() calls
        self._cases = tempfile.SpooledTemporaryFile(  # noqa: SIM115
            max_size=8 << 20, mode="w+", encoding="utf-8"
        )

    def record(self, result: AuditResult) -> None:
        suite = "audit." + (result.operations[0] if result.operations else "records")
        w = self._cases.write
        w(f'    <testcase classname="{_x(suite)}" name="record {_x(result.id)}" ')
        w(f'file="{_x(self.source)}" line="{result.line}">\n')
        if result.error is not None:
            w(f'      <error type="{_BAD_INPUT}" message="{_x(result.error)}"/>\n')
        warnings = []
        for f in result.findings:
            if f.severity == "error":
                w(f'      <failure type="{_x(f.code)}" message="{_x(f)}">')
                w(f"{_x(f.title)}: {_x(f)}</failure>\n")
            else:
                warnings.append(f"warning: {f}")
        if warnings:
            w(f"      <system-out>{_x(chr(10).join(warnings))}</system-out>\n")
        w("    </testcase>\n")

    def finish(self, summary: AuditSummary) -> None:
        failures = summary.records - summary.clean - summary.bad_lines
        attrs = (
            f'name="{_TOOL} audit {_x(self.source)}" tests="{summary.records}" '
            f'failures="{failures}" errors="{summary.bad_lines}" skipped="0"'
        )
        self.out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        self.out.write(f"<testsuites {attrs}>\n  <testsuite {attrs}>\n")
        self._cases.seek(0)
        shutil.copyfileobj(self._cases, self.out)
        self._cases.close()
        self.out.write("  </testsuite>\n</testsuites>\n")


# -- SARIF -----------------------------------------------------------------------------


def _uri(source: str) -> str:
    if source == "-":
        return "stdin"
    return quote(source.replace("\\", "/"), safe="/:._-~")


class SarifReport(_Report):
    """SARIF 2.1.0: a result per finding (``ruleId`` = the code), streamed as it comes."""

    def __init__(self, out: IO[str], source: str = "-") -> None:
        super().__init__(out, source)
        self._first = True
        rules = [
            {
                "id": code,
                "name": title.title().replace(" ", ""),
                "shortDescription": {"text": title},
                "helpUri": f"{_INFO}#error-codes",
            }
            for code, title in CODES.items()
        ]
        rules.append(
            {
                "id": _BAD_INPUT,
                "name": "UnreadableInput",
                "shortDescription": {"text": "input line that cannot be read as a record"},
            }
        )
        head = {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": _TOOL,
                            "informationUri": _INFO,
                            "rules": rules,
                        }
                    },
                    "artifacts": [{"location": {"uri": _uri(source)}}],
                }
            ],
        }
        text = json.dumps(head, indent=2, ensure_ascii=False)
        # open the run's results array by hand so results can be written one by one
        cut = text.rindex("}", 0, text.rindex("]"))
        self._tail = "\n      ]" + text[cut:]
        self.out.write(text[:cut].rstrip() + ',\n      "results": [')

    def _result(self, rule: str, level: str, message: str, line: int, **props: Any) -> None:
        result = {
            "ruleId": rule,
            "ruleIndex": list(CODES).index(rule) if rule in CODES else len(CODES),
            "level": level,
            "message": {"text": message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(self.source), "index": 0},
                        "region": {"startLine": max(line, 1)},
                    }
                }
            ],
            "properties": props,
        }
        self.out.write(("\n" if self._first else ",\n") + "        ")
        self.out.write(json.dumps(result, ensure_ascii=False, default=str))
        self._first = False

    def record(self, result: AuditResult) -> None:
        if result.error is not None:
            self._result(_BAD_INPUT, "error", result.error, result.line, recordId=result.id)
            return
        for f in result.findings:
            props = {"recordId": result.id, "location": list(f.location)}
            if f.operation:
                props["operation"] = f.operation
            level = "error" if f.severity == "error" else "warning"
            self._result(f.code, level, str(f), result.line, **props)

    def finish(self, summary: AuditSummary) -> None:
        self.out.write(self._tail + "\n")


# -- HTML ------------------------------------------------------------------------------

_GROUP_COLOURS = {"E1": "#7f8c8d", "E2": "#c0392b", "E3": "#d68910", "E4": "#2471a3"}
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1180px;color:#1c2833;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.src{color:#566573;margin:0 0 16px;word-break:break-all}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid #d5d8dc;border-radius:8px;padding:10px 16px;min-width:130px}
.card b{display:block;font-size:24px}.card span{color:#566573}
.charts{display:flex;gap:24px;flex-wrap:wrap}.chart{flex:1 1 520px}
svg text{font:12px system-ui,sans-serif;fill:#1c2833}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e5e8e8;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f4f6f6;position:sticky;top:0}td.msg{word-break:break-word}
.sev-error{color:#c0392b}.sev-warning{color:#b9770e}.note{color:#566573;font-style:italic}
code{font-size:12px}
th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#aab7b8}
.tools{display:flex;gap:8px;margin:0 0 8px}.tools input{flex:1;padding:4px 6px}
"""

# Sorting and filtering, inline (the page loads nothing): click a header to sort by it,
# type to keep the rows holding that text, pick a severity to keep only those.
_JS = """
(function(){
var t=document.getElementById('findings'),b=t.tBodies[0],q=document.getElementById('q'),
s=document.getElementById('sev');
function f(){var w=q.value.toLowerCase(),v=s.value;
for(var r of b.rows){var ok=(!w||r.textContent.toLowerCase().indexOf(w)>=0)&&
(!v||r.dataset.severity===v);r.style.display=ok?'':'none';}}
q.addEventListener('input',f);s.addEventListener('change',f);
t.tHead.querySelectorAll('th').forEach(function(h,i){h.className='sortable';
h.addEventListener('click',function(){var up=h.dataset.dir!=='up';h.dataset.dir=up?'up':'down';
var rows=Array.from(b.rows);rows.sort(function(x,y){var a=x.cells[i].textContent,
c=y.cells[i].textContent,n=parseFloat(a)-parseFloat(c);
var d=isNaN(n)?a.localeCompare(c):n;return up?d:-d;});
rows.forEach(function(r){b.appendChild(r);});});});
})();
"""


def _generated() -> str:
    """When the report was written, in UTC; ``SOURCE_DATE_EPOCH`` fixes it (reproducible
    builds' convention), so two runs can still be byte-identical."""
    import os
    from datetime import datetime, timezone

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    utc = timezone.utc  # noqa: UP017 - setup.cfg still allows 3.10, which lacks datetime.UTC
    when = (
        datetime.fromtimestamp(int(epoch), utc) if epoch and epoch.isdigit() else datetime.now(utc)
    )
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _colour(code: str) -> str:
    return _GROUP_COLOURS.get(code.split(".")[0], "#7f8c8d")


def codes_chart(by_code: dict[str, int]) -> str:
    """Vertical bars per finding code in the paper's order (its Figure 2), zeros kept."""
    codes = list(CODES)
    peak = max([by_code.get(c, 0) for c in codes] + [1])
    bar, gap, top, height, left = 34, 14, 24, 200, 36
    width = left + len(codes) * (bar + gap) + gap
    parts = [
        f'<svg id="chart-codes" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{top + height + 40}" role="img" aria-label="findings per error code">'
    ]
    base = top + height
    parts.append(f'<line x1="{left}" y1="{base}" x2="{width}" y2="{base}" stroke="#aab7b8"/>')
    for i, code in enumerate(codes):
        count = by_code.get(code, 0)
        h = round(height * count / peak)
        x = left + gap + i * (bar + gap)
        parts.append(
            f'<rect class="bar" data-code="{_e(code)}" data-count="{count}" x="{x}" '
            f'y="{base - h}" width="{bar}" height="{h}" fill="{_colour(code)}">'
            f"<title>{_e(code)} {_e(CODES[code])}: {count}</title></rect>"
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{base - h - 5}" text-anchor="middle">{count}</text>'
        )
        parts.append(
            f'<text x="{x + bar / 2}" y="{base + 16}" text-anchor="middle">{_e(code)}</text>'
        )
    parts.append(f'<text x="4" y="14">findings (max {peak})</text></svg>')
    return "".join(parts)


def operations_chart(rows: list[tuple[str, int, str]], limit: int = 25) -> str:
    """Horizontal bars: findings per operation, most first, the first ``limit`` shown."""
    shown = rows[:limit]
    peak = max([n for _, n, _ in shown] + [1])
    label, span, row = 240, 300, 22
    height = 10 + row * max(len(shown), 1) + (row if len(rows) > limit else 0)
    parts = [
        f'<svg id="chart-operations" xmlns="http://www.w3.org/2000/svg" '
        f'width="{label + span + 60}" height="{height}" role="img" '
        f'aria-label="findings per operation">'
    ]
    if not shown:
        parts.append('<text x="4" y="20">no findings</text>')
    for i, (op, count, codes) in enumerate(shown):
        y = 6 + i * row
        w = max(round(span * count / peak), 1)
        name = op if len(op) <= 34 else op[:33] + "…"
        parts.append(
            f'<text x="{label - 6}" y="{y + 13}" text-anchor="end">{_e(name)}</text>'
            f'<rect class="bar" data-operation="{_e(op)}" data-count="{count}" x="{label}" '
            f'y="{y}" width="{w}" height="{row - 6}" fill="#5d6d7e">'
            f"<title>{_e(op)}: {count} ({_e(codes)})</title></rect>"
            f'<text x="{label + w + 5}" y="{y + 13}">{count}</text>'
        )
    if len(rows) > limit:
        more = len(rows) - limit
        parts.append(
            f'<text class="note" x="{label}" y="{height - 6}">+ {more} more operations</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


class HtmlReport(_Report):
    """A self-contained HTML page: summary, charts (inline SVG), a capped findings table.

    Nothing is loaded from elsewhere: no scripts, fonts, images or style sheets.
    """

    max_rows = 5000
    #: the spec files the records were checked against, named in the page's header
    specs: tuple[str, ...] = ()

    def __init__(self, out: IO[str], source: str = "-", max_rows: int | None = None) -> None:
        super().__init__(out, source)
        if max_rows is not None:
            self.max_rows = max_rows
        self._rows: list[str] = []
        self._total_rows = 0

    def _row(self, cells: str, severity: str) -> None:
        self._total_rows += 1
        if len(self._rows) < self.max_rows:
            self._rows.append(f'<tr data-severity="{_e(severity)}">{cells}</tr>')

    def record(self, result: AuditResult) -> None:
        head = f"<td>{_e(result.id)}</td><td>{result.line}</td>"
        if result.error is not None:
            self._row(
                f'{head}<td class="sev-error">bad input</td><td></td><td></td><td></td>'
                f'<td class="msg">{_e(result.error)}</td>',
                "bad input",
            )
            return
        for f in result.findings:
            self._row(
                f'{head}<td class="sev-{_e(f.severity)}"><b>{_e(f.code)}</b> '
                f"{_e(f.severity)}</td><td>{_e(f.operation or '')}</td>"
                f"<td><code>{_e('.'.join(f.location))}</code></td>"
                f'<td>{_e(f.title)}</td><td class="msg">{_e(f)}</td>',
                f.severity,
            )

    def finish(self, summary: AuditSummary) -> None:
        findings = sum(summary.by_code.values())
        with_findings = summary.records - summary.clean - summary.bad_lines
        cards = [
            ("records", summary.records),
            ("clean", summary.clean),
            ("with findings", with_findings),
            ("bad input lines", summary.bad_lines),
            ("findings", findings),
        ]
        rate = (
            f"{100 * (summary.records - summary.clean) / summary.records:.1f}%"
            if (summary.records)
            else "n/a"
        )
        cards_html = "".join(
            f'<div class="card" id="card-{_e(k.replace(" ", "-"))}"><b>{v}</b>'
            f"<span>{_e(k)}</span></div>"
            for k, v in cards
        )
        note = ""
        if self._total_rows > len(self._rows):
            note = (
                f'<p class="note" id="table-note">Showing the first {len(self._rows)} of '
                f"{self._total_rows} rows; use --format jsonl or sarif for all of them.</p>"
            )
        code_rows = "".join(
            f"<tr><td><b>{_e(c)}</b></td><td>{_e(t)}</td><td>{n}</td><td>{w}</td></tr>"
            for c, t, n, w in summary.severity_rows()
        )
        op_rows = summary.operation_rows()
        w = self.out.write
        w('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
        w('<meta name="viewport" content="width=device-width, initial-scale=1">')
        w(f"<title>AutoFeedback audit: {_e(self.source)}</title><style>{_CSS}</style>")
        w("</head><body>\n<h1>AutoFeedback audit report</h1>")
        specs = ", ".join(self.specs) or "the records' own tools"
        w(
            f'<p class="src">Log: <code>{_e(self.source)}</code> · Spec: <code id="specs">'
            f'{_e(specs)}</code> · <span id="generated">generated {_generated()}</span> · '
            f"records not clean: {rate}</p>"
        )
        w(f'<div class="cards">{cards_html}</div>\n')
        w('<div class="charts"><div class="chart"><h2>Findings per error type</h2>')
        w(codes_chart(dict(summary.by_code)))
        w('</div><div class="chart"><h2>Findings per operation</h2>')
        w(operations_chart(op_rows))
        w("</div></div>\n<h2>Error types</h2>")
        w('<table id="codes"><thead><tr><th>code</th><th>error type</th><th>errors</th>')
        w("<th>warnings</th></tr>")
        w(f"</thead><tbody>{code_rows}</tbody></table>\n")
        w(f"<h2>Findings</h2>{note}")
        w(
            '<div class="tools"><input id="q" type="search" placeholder="filter: code, '
            'operation, text" aria-label="filter rows"><select id="sev" aria-label="severity">'
            '<option value="">every severity</option><option>error</option>'
            '<option>warning</option><option value="bad input">bad input</option></select></div>'
        )
        w('<table id="findings"><thead><tr><th>record</th>')
        w("<th>line</th><th>code</th><th>operation</th><th>location</th><th>error type</th>")
        w("<th>message</th></tr></thead><tbody>\n")
        for row in self._rows:
            w(row + "\n")
        w(f"</tbody></table>\n<script>{_JS}</script>\n</body></html>\n")
