"""Stage E1: find the API requests in raw LLM output.

:func:`parse_output` looks for every request format the supported benchmarks and agent
frameworks produce, everywhere in the text (inside Markdown fences and prose):

* ``<API>Name(key=value)</API>`` (the AutoFeedback paper), closing tag optional;
* Python calls ``Name(key=value)``, dotted names included (BFCL);
* ``API-Request: [Name(key='value'), ...]`` (API-Bank);
* JSON function calls (``{"name", "arguments"}`` and the common variants, LangChain's
  ``{"tool", "tool_input"}``, ToolAlpaca's ``{"Action", "Action_Input"}``), the ReAct
  text form ``Action: Name`` / ``Action Input: {...}``, and OpenAI ``tool_calls``;
* ``Operation: GET`` / ``Input: {"url": ...}`` (RestGPT);
* ``GET /path?query`` request lines with an optional JSON body, and ``curl``, HTTPie
  and ``wget`` commands;
* JavaScript's ``fetch(url, {...})`` and axios calls, read from their literals;
* the native tool-call formats of the model families people run (Qwen, Llama, Mistral,
  Hermes, DeepSeek, Granite, Phi, xLAM, Gemma, GLM, InternLM, Kimi, gpt-oss, MiniMax...)
  and tool calls written as XML elements (see :mod:`autofeedback._parse._native`).

One module per format: ``_tags`` (``<API>``, API-Bank, RestGPT), ``_python``, ``_json``
(JSON calls, OpenAI, ReAct), ``_http``, ``_curl``, ``_native`` (with ``_native_tokens`` and
``_native_xml``); ``_common`` holds the scan state they share; ``_output`` reads whatever
the scanner and the sequences take (text, a message, a call mapping, a parsed request)
into requests.

Model output is never evaluated: Python-style arguments are read with :func:`ast.parse`
and only literal nodes are converted. A match that lies inside a larger match of another
format (the Python call inside ``<API>...</API>``, the JSON body after ``POST /pets``)
is dropped, so each request is reported once. Calls drafted inside a ``<think>`` block
are dropped when the answer after it has calls of its own.

Every scan is linear in the input (no regex with nested quantifiers over model text,
bounded retries on malformed JSON), input is capped at :data:`MAX_INPUT_CHARS`, and
deep nesting becomes a problem, never a ``RecursionError``.

May import ``core`` only (the folders above read outputs through it).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import replace

from autofeedback._parse._common import (
    _NO_REQUEST,
    MAX_INPUT_CHARS,
    ParseResult,
    RequestFormatError,
    _Candidate,
    _GiveUp,
    _Scan,
)
from autofeedback._parse._curl import _detect_curl
from autofeedback._parse._http import _detect_http
from autofeedback._parse._httpie import _detect_httpie
from autofeedback._parse._javascript import _detect_javascript
from autofeedback._parse._json import (
    _detect_json,
    _detect_react,
    request_from_call,
    request_from_http,
)
from autofeedback._parse._native import (
    _detect_function_tags,
    _detect_invoke,
    _detect_wrappers,
    _salvage_json,
)
from autofeedback._parse._native_tokens import (
    _detect_deepseek,
    _detect_function_gemma,
    _detect_harmony,
    _detect_kimi,
)
from autofeedback._parse._native_xml import _detect_xml_elements
from autofeedback._parse._python import _detect_python
from autofeedback._parse._tags import _detect_api_bank, _detect_api_tag, _detect_restgpt
from autofeedback._parse._wget import _detect_wget
from autofeedback.core._model import ApiRequest

__all__ = [
    "MAX_INPUT_CHARS",
    "ParseResult",
    "RequestFormatError",
    "parse_output",
    "request_from_call",
    "request_from_http",
]

# Earlier detectors win ties: the more specific format names the candidate.
_DETECTORS: tuple[tuple[Callable[[_Scan], Iterator[_Candidate]], str], ...] = (
    (_detect_deepseek, "native"),
    (_detect_kimi, "native"),
    (_detect_harmony, "native"),
    (_detect_function_gemma, "native"),
    (_detect_function_tags, "native"),
    (_detect_invoke, "xml"),
    (_detect_wrappers, "native"),
    (_detect_api_tag, "api-tag"),
    (_detect_api_bank, "api-bank"),
    (_detect_restgpt, "restgpt"),
    (_detect_react, "json"),
    (_detect_curl, "http"),
    (_detect_httpie, "http"),
    (_detect_wget, "http"),
    (_detect_javascript, "http"),
    (_detect_http, "http"),
    (_detect_json, "json"),
    (_detect_xml_elements, "xml"),
    (_detect_python, "python"),
)


def _run(
    detector: Callable[[_Scan], Iterator[_Candidate]], fmt: str, scan: _Scan, rank: int
) -> list[_Candidate]:
    found: list[_Candidate] = []
    problem = None
    try:
        for candidate in detector(scan):
            candidate.rank = rank
            found.append(candidate)
    except _GiveUp as exc:
        problem = f"gave up: {exc}"
    except (RecursionError, MemoryError):
        problem = "the output is nested too deeply to parse"
    if problem is not None:
        # Placed at the end so that a specific problem found earlier is reported first.
        end = len(scan.text)
        found.append(_Candidate(end, end, fmt, claims=False, rank=rank, problem=problem))
    return found


def parse_output(text: str) -> ParseResult:
    """Find every API request in one LLM output, in order of appearance.

    Never raises for bad output: when nothing parses, ``problem`` says which format came
    closest and where it broke (``format_hint`` names that format).

    >>> parse_output("Sure! <API>get_weather(city=Beijing, days=3)</API>").requests[0].arguments
    {'city': 'Beijing', 'days': 3}
    >>> parse_output("get_weather('Paris')").problem
    'looks like a Python call but positional argument 1 has no parameter name'
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_output() takes the output text as str, got {type(text).__name__}")
    if len(text) > MAX_INPUT_CHARS:
        return ParseResult(
            (),
            problem=f"the output is too long to parse: {len(text)} characters "
            f"(limit {MAX_INPUT_CHARS})",
        )
    scan = _Scan(text)
    candidates: list[_Candidate] = []
    for rank, (detector, fmt) in enumerate(_DETECTORS):
        found = _run(detector, fmt, scan, rank)
        candidates.extend(found)
        scan.claim([(c.start, c.end) for c in found if c.claims])

    # Outermost first: a match inside a larger claimed match is the same request again.
    selected: list[_Candidate] = []
    last_end = -1
    for c in sorted((c for c in candidates if c.claims), key=lambda c: (c.start, -c.end, c.rank)):
        if c.start >= last_end:
            selected.append(c)
            last_end = c.end
    selected = _outside_thinking(text, selected)
    requests: list[ApiRequest] = []
    for c in selected:
        if c.problem is None:
            for r in c.requests:
                raw = text[c.start : c.end] if len(c.requests) == 1 or not r.raw else r.raw
                requests.append(replace(r, raw=raw))
    if requests:
        return ParseResult(tuple(requests))
    return _explain(text, candidates, selected)


def _explain(text: str, candidates: list[_Candidate], selected: list[_Candidate]) -> ParseResult:
    strong = [c for c in selected if c.problem is not None]
    if strong:
        return _problem(text, strong[0])
    starts = [c.start for c in selected]  # sorted, and the spans do not overlap

    def hidden(c: _Candidate) -> bool:
        i = bisect_right(starts, c.start) - 1
        if i < 0:
            return False
        outer = selected[i]
        return c.end <= outer.end and (outer.start, outer.end) != (c.start, c.end)

    weak = [c for c in candidates if c.problem is not None and not c.claims and not hidden(c)]
    if weak:
        # Python-looking fragments are common in prose ("see note(s)"): report them last.
        best = min(weak, key=lambda c: (c.format == "python", c.start, c.rank))
        return _problem(text, best)
    notes = [c for c in selected if c.note is not None]
    if notes:
        return ParseResult((), problem=notes[0].note, format_hint=notes[0].format)
    return ParseResult((), problem=_NO_REQUEST)


def _problem(text: str, c: _Candidate) -> ParseResult:
    suggestion = c.suggestion
    if (
        suggestion is None
        and c.format in ("json", "openai")
        and text[c.start : c.start + 1] in "{["
    ):
        # a JSON call that breaks off or has a stray comma: close it and show it rewritten
        suggestion = _salvage_json(text[c.start : c.start + 100_000])
    return ParseResult((), problem=c.problem, format_hint=c.format, suggestion=suggestion)


_THINK_OPEN = re.compile(r"<(think|thinking|reasoning|seed:think)>")


def _thinking_spans(text: str) -> list[tuple[int, int]]:
    """Closed ``<think>`` blocks; a ``</think>`` with no opening tag (the chat template
    wrote it) closes a block that starts the output."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _THINK_OPEN.search(text, pos)) is not None:
        close = text.find(f"</{m.group(1)}>", m.end())
        if close == -1:
            break
        spans.append((m.start(), close))
        pos = close
    if not spans:
        close = text.find("</think>")
        if close != -1:
            spans.append((0, close))
    return spans


def _outside_thinking(text: str, selected: list[_Candidate]) -> list[_Candidate]:
    """Drop what was drafted while thinking, when the answer has calls of its own."""
    if "think>" not in text and "reasoning>" not in text:
        return selected
    spans = _thinking_spans(text)  # sorted and disjoint
    starts = [start for start, _ in spans]

    def inside(c: _Candidate) -> bool:
        i = bisect_right(starts, c.start) - 1
        return i >= 0 and c.start < spans[i][1]

    answer = [c for c in selected if not inside(c)]
    if any(c.requests and c.problem is None for c in answer):
        return answer
    return selected
