"""Native tool calls of the token-delimited families (see :mod:`autofeedback._parse._native`):
DeepSeek V3/R1 and V3.1 ``<｜tool▁call▁begin｜>``, Kimi K2 ``<|tool_call_begin|>``,
gpt-oss (harmony) ``to=functions.name``, FunctionGemma ``<start_function_call>``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from autofeedback._parse._common import (
    _Candidate,
    _Problem,
    _Scan,
)
from autofeedback._parse._native import (
    _NAME,
    _Broken,
    _broken,
    _json_object,
    _request,
    _salvage_named,
    _strip_fence,
)

_DS_BEGIN = re.compile(r"<[|｜]tool▁call▁begin[|｜]>")
_DS_SEP = re.compile(r"<[|｜]tool▁sep[|｜]>")
_DS_END = re.compile(r"<[|｜]tool▁calls?▁end[|｜]>")


def _detect_deepseek(scan: _Scan) -> Iterator[_Candidate]:
    text = scan.text
    if "tool" not in text:
        return
    label = "a DeepSeek tool call"
    opens = list(_DS_BEGIN.finditer(text))
    for i, m in enumerate(opens):
        scan.tick("DeepSeek tool call")
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        close = _DS_END.search(text, m.end(), limit)
        body = text[m.end() : close.start() if close is not None else limit]
        end = close.end() if close is not None else m.end() + len(body.rstrip())
        sep = _DS_SEP.search(body)
        if sep is None:
            yield _Candidate(
                m.start(), end, "native", problem=f"looks like {label} but it has no <｜tool▁sep｜>"
            )
            continue
        before, after = body[: sep.start()].strip(), body[sep.end() :]
        if before == "function":  # V3/R1: type, separator, name, then fenced JSON
            eol = after.find("\n")
            name = (after[:eol] if eol != -1 else after).strip()
            rest = after[eol + 1 :] if eol != -1 else ""
        else:  # V3.1: name, separator, JSON
            name, rest = before, after
        if not re.fullmatch(_NAME, name):
            yield _Candidate(
                m.start(), end, "native", problem=f"looks like {label} but it names no function"
            )
            continue
        try:
            args = _json_object(rest, f"the arguments of {name!r}")
        except _Problem as exc:
            reason = exc.reason if close is not None else f"the arguments of {name!r} are cut off"
            salvage = _salvage_named(name, _strip_fence(rest))
            yield _broken(m.start(), end, label, _Broken(reason, salvage))
            continue
        yield _Candidate(m.start(), end, "native", requests=(_request(name, args, "native"),))


_KIMI = re.compile(
    r"<\|tool_call_begin\|>\s*(?:functions\.)?([\w.-]{1,200}?)(?::\d+)?\s*<\|tool_call_argument_begin\|>"
)


def _blocks(
    text: str, opener: re.Pattern[str], closers: tuple[str, ...]
) -> Iterator[tuple[re.Match[str], str, int, bool]]:
    """Each opening match with its body, its end and whether it was closed; a body never
    runs past the next opening, so a scan stays linear in the text."""
    opens = list(opener.finditer(text))
    for i, m in enumerate(opens):
        limit = opens[i + 1].start() if i + 1 < len(opens) else len(text)
        close, size = -1, 0
        for token in closers:
            found = text.find(token, m.end(), limit)
            if found != -1 and (close == -1 or found < close):
                close, size = found, len(token)
        if close != -1:
            yield m, text[m.end() : close], close + size, True
        else:
            body = text[m.end() : limit]
            yield m, body, m.end() + len(body.rstrip()), False


def _json_block_calls(
    scan: _Scan, opener: re.Pattern[str], closers: tuple[str, ...], label: str
) -> Iterator[_Candidate]:
    """Blocks whose opening names the function and whose body is the JSON arguments."""
    for m, body, end, _ in _blocks(scan.text, opener, closers):
        scan.tick(label)
        name = m.group(1)
        try:
            args = _json_object(body, f"the arguments of {name!r}")
        except _Problem as exc:
            yield _broken(m.start(), end, label, _Broken(exc.reason, _salvage_named(name, body)))
            continue
        yield _Candidate(m.start(), end, "native", requests=(_request(name, args, "native"),))


def _detect_kimi(scan: _Scan) -> Iterator[_Candidate]:
    if "<|tool_call_begin|>" in scan.text:
        yield from _json_block_calls(scan, _KIMI, ("<|tool_call_end|>",), "a Kimi K2 tool call")


_HARMONY = re.compile(
    r"to=functions\.([\w.-]{1,200})[^\n<]{0,200}(?:<\|(?:constrain|channel)\|>[^\n<]{0,50}){0,2}<\|message\|>"
)


def _detect_harmony(scan: _Scan) -> Iterator[_Candidate]:
    if "to=functions." in scan.text:
        closers = ("<|call|>", "<|end|>", "<|start|>")
        yield from _json_block_calls(scan, _HARMONY, closers, "a gpt-oss (harmony) tool call")


_GEMMA = re.compile(rf"<start_function_call>\s*call:({_NAME}?)\{{")
_GEMMA_ITEM = re.compile(r"\s*([\w.-]{1,200})\s*:\s*")
_GEMMA_BARE = re.compile(r"[^,}]*")


def _detect_function_gemma(scan: _Scan) -> Iterator[_Candidate]:
    if "<start_function_call>" not in scan.text:
        return
    label = "a FunctionGemma call"
    for m, body, end, _ in _blocks(scan.text, _GEMMA, ("<end_function_call>",)):
        scan.tick(label)
        try:
            args = _gemma_args(body)
        except _Problem as exc:
            yield _Candidate(
                m.start(), end, "native", problem=f"looks like {label} but {exc.reason}"
            )
            continue
        request = _request(m.group(1), args, "native")
        yield _Candidate(m.start(), end, "native", requests=(request,))


def _gemma_args(body: str) -> dict[str, Any]:
    """``key:<escape>text<escape>,n:3}``: escaped strings, the rest JSON-like literals."""
    args: dict[str, Any] = {}
    pos = 0
    while True:
        if body.startswith("}", pos):
            return args
        item = _GEMMA_ITEM.match(body, pos)
        if item is None:
            raise _Problem(f"the arguments break off at character {pos + 1}")
        key, pos = item.group(1), item.end()
        if body.startswith("<escape>", pos):
            close = body.find("<escape>", pos + 8)
            if close == -1:
                raise _Problem(f"the value of {key!r} is cut off")
            args[key], pos = body[pos + 8 : close], close + 8
        else:
            bare = _GEMMA_BARE.match(body, pos)
            assert bare is not None  # [^,}]* always matches
            raw = bare.group().strip()
            try:
                args[key] = json.loads(raw)
            except (ValueError, RecursionError):
                args[key] = raw
            pos = bare.end()
        if pos >= len(body):
            raise _Problem(f"the arguments are cut off after {key!r}")
        if body[pos] == ",":
            pos += 1
