"""How fast is a scan, per output format?

One request, ``searchBooks(query='science', published_after='2020-01-01', limit=10)`` on
the bundled bookshop spec, written in every format the parser reads: the paper's
``<API>`` tag, Python, JSON, OpenAI, HTTP, curl, and the native tool-call formats of the
model families (Qwen, Llama, Mistral, DeepSeek, Kimi, GLM, gpt-oss, FunctionGemma, XML
elements...), each with a sentence of reasoning before it as models write. For each,
the p50 of :func:`parse_output` alone and of a whole structural scan (parse, resolve,
check names, parameters and values; no model is touched when the request is right).

    python benchmarks/parse_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Scanner
from autofeedback.parsing import parse_output
from benchmarks._results import write_section

SPEC = Path(__file__).resolve().parents[1] / "specs" / "examples" / "bookshop.yaml"
_ARGS_JSON = '{"query": "science", "published_after": "2020-01-01", "limit": 10}'
_CALL_JSON = '{"name": "searchBooks", "arguments": ' + _ARGS_JSON + "}"
_LEAD = "I will look for recent science books in the catalogue.\n"

#: (format, family, output): the same request in every format.
OUTPUTS: list[tuple[str, str, str]] = [
    (
        "api-tag",
        "AutoFeedback paper",
        "<API>searchBooks(query='science', published_after='2020-01-01', limit=10)</API>",
    ),
    (
        "python",
        "BFCL / Llama 3.2 pythonic",
        "searchBooks(query='science', published_after='2020-01-01', limit=10)",
    ),
    ("json", "JSON call", _CALL_JSON),
    (
        "openai",
        "OpenAI tool_calls",
        '{"tool_calls": [{"type": "function", "function": '
        '{"name": "searchBooks", "arguments": ' + _ARGS_JSON + "}}]}",
    ),
    ("http", "HTTP request line", "GET /books?query=science&published_after=2020-01-01&limit=10"),
    (
        "http",
        "curl",
        "curl -X GET 'http://127.0.0.1:8080/books?query=science"
        "&published_after=2020-01-01&limit=10'",
    ),
    ("native", "Qwen 2.5 / Hermes <tool_call>", f"<tool_call>\n{_CALL_JSON}\n</tool_call>"),
    (
        "xml",
        "Qwen3-Coder <function=><parameter=>",
        "<tool_call>\n<function=searchBooks>\n"
        "<parameter=query>\nscience\n</parameter>\n<parameter=published_after>\n2020-01-01\n"
        "</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "native",
        "Llama 3.1 <|python_tag|>",
        '<|python_tag|>{"name": "searchBooks", "parameters": ' + _ARGS_JSON + "}<|eom_id|>",
    ),
    ("native", "Llama 3.1 <function=>", f"<function=searchBooks>{_ARGS_JSON}</function>"),
    ("native", "Mistral [TOOL_CALLS]", f"[TOOL_CALLS] [{_CALL_JSON}]"),
    ("native", "Mistral v11 [ARGS]", f"[TOOL_CALLS]searchBooks[ARGS]{_ARGS_JSON}"),
    (
        "native",
        "DeepSeek V3 / R1",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
        "<｜tool▁sep｜>searchBooks\n```json\n" + _ARGS_JSON + "\n```<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>",
    ),
    ("native", "Granite <|tool_call|>", f"<|tool_call|>[{_CALL_JSON}]"),
    ("json", "Phi-4-mini functools", f"functools[{_CALL_JSON}]"),
    (
        "native",
        "InternLM plugin",
        '<|action_start|><|plugin|>\n{"name": "searchBooks", '
        '"parameters": ' + _ARGS_JSON + "}<|action_end|>",
    ),
    (
        "xml",
        "GLM-4.5 <arg_key>",
        "<tool_call>searchBooks\n<arg_key>query</arg_key>\n"
        "<arg_value>science</arg_value>\n<arg_key>published_after</arg_key>\n"
        "<arg_value>2020-01-01</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>10</arg_value>\n"
        "</tool_call>",
    ),
    (
        "native",
        "Kimi K2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions."
        "searchBooks:0<|tool_call_argument_begin|>" + _ARGS_JSON + "<|tool_call_end|>"
        "<|tool_calls_section_end|>",
    ),
    (
        "native",
        "gpt-oss (harmony)",
        "<|channel|>commentary to=functions.searchBooks "
        "<|constrain|>json<|message|>" + _ARGS_JSON + "<|call|>",
    ),
    (
        "native",
        "FunctionGemma",
        "<start_function_call>call:searchBooks{query:<escape>science"
        "<escape>,published_after:<escape>2020-01-01<escape>,limit:10}<end_function_call>",
    ),
    (
        "xml",
        "MiniMax-M2 <invoke>",
        '<invoke name="searchBooks">\n<parameter name="query">'
        'science</parameter>\n<parameter name="published_after">2020-01-01</parameter>\n'
        '<parameter name="limit">10</parameter>\n</invoke>',
    ),
    (
        "xml",
        "XML attributes",
        "<searchBooks query='science' published_after='2020-01-01' limit=10></searchBooks>",
    ),
    (
        "xml",
        "XML child elements",
        "<searchBooks>\n<query>science</query>\n"
        "<published_after>2020-01-01</published_after>\n<limit>10</limit>\n</searchBooks>",
    ),
]


def _p50_us(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=500)
    args = parser.parse_args(argv)
    scanner = Scanner(ApiCatalog.from_file(SPEC), retriever=None)
    rows = []
    for fmt, family, output in OUTPUTS:
        text = _LEAD + output
        parsed = parse_output(text)
        findings = list(scanner.iter_findings(text))
        if [r.format for r in parsed.requests] != [fmt] or findings:
            print(f"{family}: parsed {parsed}, findings {findings}", file=sys.stderr)
            return 1
        for _ in range(20):  # warm caches (compiled schemas, regexes)
            scanner.scan(text)
        parse_us = _p50_us(lambda text=text: parse_output(text), args.repeat)
        scan_us = _p50_us(lambda text=text: scanner.scan(text), args.repeat)
        shown = family.replace("|", "\\|")  # a table cell holds no bare "|"
        rows.append(f"| {shown} | `{fmt}` | {len(text)} | {parse_us:.0f} | {scan_us:.0f} |")
    table = "\n".join(
        [
            "The same bookshop request (`searchBooks`, three arguments) in every format, "
            "after one sentence of prose; structural scan against "
            "`specs/examples/bookshop.yaml` (no model). p50 over "
            f"{args.repeat} runs, microseconds, on this machine (2 shared CPU cores).",
            "",
            "| format family | request format | characters | parse p50 (µs) | scan p50 (µs) |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )
    print(table)
    if args.repeat == 500:
        write_section("Parse speed per format", "python benchmarks/parse_speed.py", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
