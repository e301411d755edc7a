"""Audit inputs other than the JSONL record log: HAR captures and OpenAI chat logs.

Each reader turns its input into :class:`~autofeedback.audit._audit.Unit` values that follow
the JSONL record contract (``{"id", "instruction", "tools", "call" | "request" |
"output"}``), lazily and in order. Nothing is dropped: a unit that cannot be read
becomes a ``Unit`` with ``error`` set, which the audit reports as a bad input line.

HAR files are read incrementally: the top-level object is walked with
:meth:`json.JSONDecoder.raw_decode` and ``log.entries`` is decoded one entry at a time
from a growing text buffer, so memory is bounded by the largest single entry, not by
the file. Only a structurally broken HAR (one whose next entry cannot be decoded) stops
the reader; it then reports that entry as unreadable and says the rest was skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, Literal
from urllib.parse import parse_qsl

from autofeedback._parse._common import json_reason
from autofeedback._parse._providers import find_tool_calls, kept_upstream, provider_tools
from autofeedback._parse._streams import assemble_stream, is_stream
from autofeedback.audit._audit import Unit
from autofeedback.core._model import ApiRequest
from autofeedback.core._redact import redact, request_secrets
from autofeedback.scanner._scan import one_line

__all__ = [
    "INPUT_FORMATS",
    "InputFormat",
    "har_request",
    "har_session_record",
    "openai_records",
    "read_har",
    "read_har_session",
    "read_openai",
    "sniff_format",
]

InputFormat = Literal["jsonl", "har", "openai"]
INPUT_FORMATS: tuple[str, ...] = ("auto", "jsonl", "har", "openai")

_CHUNK = 1 << 20
# Values of these headers are credentials: they are never needed to check a request
# against the docs, and must not surface in a report through a finding's ``got``.
#: keys only an OpenAI chat-completion log line has (``messages`` alone is also a chat
#: trace record of the JSONL contract: it needs a response beside it to be a log line)
_OPENAI_KEYS = frozenset({"response", "custom_id", "choices", "body"})


# -- sniffing --------------------------------------------------------------------------


def sniff_format(name: str, head: str) -> InputFormat:
    """Guess the input format from a file name and its first characters.

    >>> sniff_format("capture.har", "")
    'har'
    >>> sniff_format("log.jsonl", '{"custom_id": "r1", "response": {"body": {}}}')
    'openai'
    >>> sniff_format("-", '{"id": 1, "call": {"name": "f"}}')
    'jsonl'
    >>> sniff_format("trace.jsonl", '{"id": "t", "tools": [], "messages": []}')  # a trace
    'jsonl'
    """
    if name.lower().endswith(".har"):
        return "har"
    first = next((line for line in head.splitlines() if line.strip()), "")
    try:
        value = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        # a pretty-printed JSON document, not one object per line
        return "har" if first.lstrip().startswith("{") and '"log"' in head else "jsonl"
    if is_stream(value) and not isinstance(value, str):
        return "openai"  # a line that is a streamed answer's events
    if isinstance(value, Mapping):
        if "log" in value and isinstance(value["log"], Mapping):
            return "har"
        if _OPENAI_KEYS & value.keys():
            return "openai"
        request = value.get("request")
        if isinstance(request, Mapping) and "messages" in request:
            return "openai"
        if "messages" in value or "steps" in value:
            return "jsonl"  # a chat trace record: the conversation is the record
        if not {"output", "call"} & value.keys() and find_tool_calls(value) is not None:
            return "openai"  # a bare Anthropic / Gemini / Bedrock response per line
    return "jsonl"


# -- HAR -------------------------------------------------------------------------------


class _HarError(Exception):
    pass


class _Buffer:
    """A text buffer over a stream, grown on demand, trimmed as values are consumed."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.text = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line number of ``pos`` in the whole stream
        self.started = False

    def more(self) -> bool:
        if self.eof:
            return False
        # grow geometrically so a huge entry is re-parsed O(log n) times, not O(n)
        want = max(_CHUNK, len(self.text) - self.pos)
        chunk = self.stream.read(want)
        if not chunk:
            self.eof = True
            return False
        if not self.started:
            self.started = True
            chunk = chunk.removeprefix("\ufeff")  # a BOM before the HAR's first "{"
        self.line += self.text.count("\n", 0, self.pos)
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def skip_ws(self) -> str:
        """The next non-blank character ('' at the end), without consuming it."""
        while True:
            text, n = self.text, len(self.text)
            while self.pos < n and text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < n:
                return text[self.pos]
            if not self.more():
                return ""

    def expect(self, chars: str) -> str:
        got = self.skip_ws()
        if not got or got not in chars:
            shown = repr(got) if got else "the end of the file"
            raise _HarError(f"expected {' or '.join(repr(c) for c in chars)}, got {shown}")
        self.pos += 1
        return got

    def value(self, decoder: json.JSONDecoder) -> Any:
        self.skip_ws()
        while True:
            try:
                value, end = decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self.text) - 16 or exc.msg.startswith("Unterminated")
                if near_end and self.more():
                    continue
                where = f"at column {exc.colno}"
                raise _HarError(f"not valid JSON: {json_reason(exc)} {where}") from None
            except RecursionError:
                raise _HarError("nested too deeply") from None
            # a number cut at the buffer's end decodes "successfully" but short
            if end >= len(self.text) and not self.eof and self.more():
                continue
            self.pos = end
            return value

    def current_line(self) -> int:
        return self.line + self.text.count("\n", 0, self.pos)


def _walk_to(buf: _Buffer, decoder: json.JSONDecoder, path: tuple[str, ...]) -> None:
    """Advance ``buf`` to just inside the array at ``path`` (object keys), skipping the
    values of other keys."""
    for depth, key in enumerate(path):
        buf.expect("{")
        while True:
            if buf.skip_ws() == "}":
                where = ".".join(path[:depth]) or "the top level"
                raise _HarError(f"no {key!r} in {where}: not a HAR file")
            name = buf.value(decoder)
            buf.expect(":")
            if name == key:
                break
            buf.value(decoder)
            if buf.expect(",}") == "}":
                raise _HarError(f"no {key!r} found: not a HAR file")
    buf.expect("[")


def read_har(stream: IO[str]) -> Iterator[Unit]:
    """Each entry of a HAR capture's ``log.entries`` as an audit record ``{"id", "request"}``.

    >>> import io
    >>> har = '{"log": {"entries": [{"request": {"method": "GET", "url": "/ping"}}]}}'
    >>> [u.record for u in read_har(io.StringIO(har))]
    [{'id': 1, 'request': {'method': 'GET', 'url': '/ping'}}]
    """
    buf = _Buffer(stream)
    decoder = json.JSONDecoder()
    try:
        _walk_to(buf, decoder, ("log", "entries"))
    except _HarError as exc:
        yield Unit(buf.current_line(), error=f"HAR: {exc}", id="har")
        return
    index = 0
    while True:
        try:
            if buf.skip_ws() == "]":
                return
            if index:
                buf.expect(",")
            buf.skip_ws()
            line = buf.current_line()
            entry = buf.value(decoder)
        except _HarError as exc:
            yield Unit(
                buf.current_line(),
                error=f"HAR entry {index + 1}: {exc}; the rest of the file was not read",
                id=index + 1,
            )
            return
        index += 1
        try:
            record = {"id": index, "request": har_request(entry)}
        except _HarError as exc:
            yield Unit(line, error=f"HAR entry {index}: {exc}", id=index)
        except Exception as exc:  # one odd entry is that entry's error, never the file's
            yield Unit(line, error=f"HAR entry {index}: {one_line(exc)}", id=index)
        else:
            yield Unit(line, record, id=index)


def _pairs(items: Any, what: str) -> list[tuple[str, str]]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise _HarError(f"'{what}' must be a list")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise _HarError(f"'{what}' items need a 'name'")
        value = item.get("value", "")
        out.append((item["name"], value if isinstance(value, str) else json.dumps(value)))
    return out


def har_request(entry: Any) -> dict[str, Any]:
    """The JSONL ``request`` record for one HAR entry (credential headers redacted).

    >>> har_request({"request": {"method": "POST", "url": "/pets", "postData": {
    ...     "mimeType": "application/json", "text": '{"name": "Rex"}'}}})
    {'method': 'POST', 'url': '/pets', 'json': {'name': 'Rex'}}
    """
    if not isinstance(entry, Mapping) or not isinstance(entry.get("request"), Mapping):
        raise _HarError("entry has no 'request' object")
    req = entry["request"]
    method, url = req.get("method"), req.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise _HarError("request needs a string 'method' and 'url'")
    out: dict[str, Any] = {"method": method, "url": url}
    raw_headers = {
        name: value
        for name, value in _pairs(req.get("headers"), "headers")
        if not name.startswith(":")  # HTTP/2 pseudo-headers are not API parameters
    }
    # the credentials a capture holds are masked before anything reads them, also
    # where the same value shows up again (in the URL, the body...); but for the
    # ``Cookie`` header, whose cookies are the parameters a spec documents ``in:
    # cookie``: it is read as sent and its values are masked wherever the audit shows
    # them, as in a JSONL record (masked here, a required cookie sent was missing)
    secrets = request_secrets(ApiRequest(method=method, url=url, headers=raw_headers))
    cookies = {n: v for n, v in raw_headers.items() if n.lower() == "cookie"}
    headers = redact(raw_headers)
    if headers:
        out["headers"] = headers
    query = _pairs(req.get("queryString"), "queryString")
    if query and "?" not in url:  # browsers put the query in the URL too; never count it twice
        out["params"] = dict(query)
    post = req.get("postData")
    if isinstance(post, Mapping):
        mime = str(post.get("mimeType", "")).split(";")[0].strip().lower()
        text = post.get("text")
        if isinstance(text, str) and (mime.endswith("json") or mime.endswith("+json")):
            try:
                out["json"] = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                out["data"] = text
        elif mime == "application/x-www-form-urlencoded" and isinstance(text, str):
            out["data"] = dict(parse_qsl(text, keep_blank_values=True))
        elif post.get("params"):
            out["data"] = dict(_pairs(post.get("params"), "postData.params"))
        elif isinstance(text, str) and text:
            out["data"] = text
    if secrets:
        out = dict(redact(out, secrets=secrets))
    if cookies:
        out["headers"] = {n: cookies.get(n, v) for n, v in out["headers"].items()}
    return out


# -- OpenAI chat logs ------------------------------------------------------------------


def _unwrap(value: Any) -> Any:
    """``{"body": {...}}`` (batch files, proxies) -> the body itself."""
    while isinstance(value, Mapping) and isinstance(value.get("body"), Mapping):
        value = value["body"]
    return value


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _split(line: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any]:
    """(request, response) of one log line, whatever wrapping it uses. A response logged
    as the stream it came in (its events, or their server-sent-events text) is read as
    the response they make up."""
    request = _unwrap(line.get("request"))
    if not isinstance(request, Mapping):
        request = _unwrap(line) if "messages" in _unwrap(line) else {}
    response = _unwrap(line.get("response"))
    if is_stream(response):
        response = assemble_stream(response)
    if response is None and "choices" in _unwrap(line):
        response = _unwrap(line)
    if response is None and find_tool_calls(_unwrap(line)) is not None:
        response = _unwrap(line)  # a bare Anthropic / Responses / Gemini / Bedrock response
    return request, response


def _instruction(request: Mapping[str, Any]) -> str | None:
    """The last user turn of a chat request in any provider's form."""
    for key in ("messages", "input", "contents"):
        turns = request.get(key)
        if isinstance(turns, str) and key == "input":
            return turns
        if not isinstance(turns, list):
            continue
        users = [m for m in turns if isinstance(m, Mapping) and m.get("role") == "user"]
        if users:
            last = users[-1]
            return _text(last.get("content")) or _parts_text(last.get("parts"))
    return None


def _context(request: Mapping[str, Any]) -> str | None:
    """Everything a chat request told the model in words: its system prompt (OpenAI's
    ``system`` and ``developer`` messages, Anthropic's ``system``, the Responses API's
    ``instructions``, Gemini's ``systemInstruction``) and every user turn."""
    texts: list[str] = []
    for key in ("system", "instructions"):
        told = _text(request.get(key))
        if told:
            texts.append(told)
    system = request.get("systemInstruction")
    if isinstance(system, Mapping):
        told = _parts_text(system.get("parts"))
        if told:
            texts.append(told)
    for key in ("messages", "input", "contents"):
        turns = request.get(key)
        for m in turns if isinstance(turns, list) else ():
            if isinstance(m, Mapping) and m.get("role") in ("system", "developer", "user"):
                told = _text(m.get("content")) or _parts_text(m.get("parts"))
                if told:
                    texts.append(told)
    return "\n".join(texts) or None


def _history(request: Mapping[str, Any]) -> list[Any] | None:
    """The conversation a request carried, in its provider's shape: ``messages`` (OpenAI
    Chat, Anthropic, Bedrock), ``input`` (Responses), ``contents`` (Gemini)."""
    for key in ("messages", "input", "contents"):
        turns = request.get(key)
        if isinstance(turns, list):
            return turns
    return None


def _parts_text(parts: Any) -> str | None:
    if not isinstance(parts, list):
        return None
    texts = [p.get("text") for p in parts if isinstance(p, Mapping)]
    return "\n".join(t for t in texts if isinstance(t, str)) or None


def _provider_records(response: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Records of an Anthropic / OpenAI Responses / Gemini / Bedrock response: one per
    tool call, or its text when it made none; ``None`` when it is in none of these."""
    calls = find_tool_calls(response)
    if calls is None:
        return None
    if calls:
        return [
            {"call": {"name": c.name, "arguments": c.arguments}, "shape": c.shape} for c in calls
        ]
    texts: list[str] = []
    for key in ("content", "output", "candidates"):
        value = response.get(key)
        if key == "output" and isinstance(value, Mapping):
            value = (value.get("message") or {}).get("content")
        for item in value if isinstance(value, list) else []:
            if not isinstance(item, Mapping):
                continue
            got = _text(item.get("content")) or _parts_text(
                (item.get("content") or {}).get("parts")
                if isinstance(item.get("content"), Mapping)
                else None
            )
            text = item.get("text") if isinstance(item.get("text"), str) else got
            if text:
                texts.append(text)
    return [{"output": "\n".join(texts)}]


def openai_records(line: Any, number: int) -> list[dict[str, Any]]:
    """The audit records of one chat-completion log line: one per tool call.

    ``tools`` come from the request, ``instruction`` is the last user message; a reply
    without tool calls becomes one ``output`` record (its text, checked as raw output).
    Raises ``ValueError`` when the line holds no response to audit.

    >>> line = {"request": {"messages": [{"role": "user", "content": "Hi"}]},
    ...         "response": {"choices": [{"message": {"tool_calls": [
    ...             {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}}
    >>> openai_records(line, 1)[0]["call"]["function"]["name"]
    'f'
    """
    if is_stream(line):
        line = {"response": line}  # a line that is the stream's events alone
    if not isinstance(line, Mapping):
        raise ValueError("line is not a JSON object")
    request, response = _split(line)
    if not isinstance(response, Mapping):
        error = line.get("error")
        if isinstance(error, Mapping):
            raise ValueError(f"the request failed: {error.get('message') or error}")
        if "messages" in line or "steps" in line:
            raise ValueError(
                "line holds no chat-completion response to audit; it reads as a chat trace "
                'record ({"messages": [...]}): audit it with --input-format jsonl'
            )
        raise ValueError("line holds no chat-completion response to audit")
    choices = response.get("choices")
    provider = None if isinstance(choices, list) else _provider_records(response)
    if provider is None and (not isinstance(choices, list) or not choices):
        raise ValueError("response has no 'choices'")
    base: Any = line.get("custom_id") or line.get("id") or response.get("id") or number
    common: dict[str, Any] = {}
    tools = request.get("tools") or request.get("functions") or request.get("toolConfig")
    if tools is not None:
        common["tools"] = provider_tools(tools)
    instruction = _instruction(request)
    if instruction:
        common["instruction"] = instruction
    context = _context(request)
    if context and context != instruction:
        common["context"] = context
    history = _history(request)
    from autofeedback.scanner._sequences import has_tool_steps  # the flow checks: only here

    # (not where the Responses API keeps the conversation, previous_response_id or
    # conversation: the input is then only its latest items, as the proxy reads it)
    if history is not None and not kept_upstream(request) and has_tool_steps(history):
        # an agent's run so far: the calls of this response are its next steps, checked
        # for data flow as the proxy and check_tool_calls(history=) check them
        common["history"] = history
    records: list[dict[str, Any]] = []
    for record in provider or ():
        records.append({**common, **{k: v for k, v in record.items() if k != "shape"}})
    for choice in choices if isinstance(choices, list) else ():
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(message, Mapping):
            raise ValueError("a choice has no 'message'")
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            records += [{**common, "call": call} for call in calls]
        elif isinstance(message.get("function_call"), Mapping):
            records.append({**common, "call": message["function_call"]})
        else:
            records.append({**common, "output": _text(message.get("content")) or ""})
    for k, record in enumerate(records, 1):
        record["id"] = base if len(records) == 1 else f"{base}#{k}"
    return records


def read_openai(lines: Iterable[str | bytes], *, start: int = 1) -> Iterator[Unit]:
    """Audit units from an OpenAI chat-completion log (JSONL), lazily, one per tool call.

    Accepts ``{"request", "response"}`` lines, ``{"body": ...}`` wrappers and batch
    output lines ``{"custom_id", "response": {"body": ...}}``.

    >>> line = ('{"custom_id": "r1", "response": {"body": {"choices": [{"message": '
    ...         '{"content": "GET /ping"}}]}}}')
    >>> [u.record for u in read_openai([line])]
    [{'output': 'GET /ping', 'id': 'r1'}]
    """
    for number, raw in enumerate(lines, start=start):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if number == start:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue  # a blank line is no record (jq and pandas skip it too)
        try:
            value = json.loads(text.rstrip("\r\n"))  # a line cut inside a string: "Unterminated"
        except Exception as exc:
            if isinstance(exc, json.JSONDecodeError):
                reason = f"{json_reason(exc)} at column {exc.colno}"
            else:
                reason = "nested too deeply" if isinstance(exc, RecursionError) else one_line(exc)
            yield Unit(number, error=f"not valid JSON: {reason}")
            continue
        try:
            records = openai_records(value, number)
        except Exception as exc:
            rid = value.get("custom_id") if isinstance(value, Mapping) else None
            if not isinstance(rid, (str, int)) or isinstance(rid, bool):
                rid = None
            reason = str(exc) if isinstance(exc, ValueError) else one_line(exc)
            yield Unit(number, error=str(redact(f"chat log: {reason}")), id=rid)
            continue
        for record in records:
            yield Unit(number, record, id=record["id"])


# -- a HAR capture as one session --------------------------------------------------------


def har_session_record(har: Any, *, instruction: str | None = None) -> dict[str, Any]:
    """A HAR capture as one trace record: each entry a ``request`` step, in order, with
    its ``response`` (status and body, JSON-decoded where it is JSON), so that values a
    later request reuses are grounded in the earlier responses (E5.3). Credential headers
    are masked as in :func:`har_request`. Raises ``ValueError`` on a document that is
    not a HAR capture.

    >>> har = {"log": {"entries": [{"request": {"method": "GET", "url": "/books?query=x"},
    ...     "response": {"status": 200, "content": {"text": '{"books": [{"id": 7}]}'}}}]}}
    >>> har_session_record(har)["steps"][0]["response"]
    {'status': 200, 'body': '{"books": [{"id": 7}]}'}
    """
    log = har.get("log") if isinstance(har, Mapping) else None
    entries = log.get("entries") if isinstance(log, Mapping) else None
    if not isinstance(entries, list):
        raise ValueError("not a HAR capture: no log.entries list")
    steps: list[dict[str, Any]] = []
    for index, entry in enumerate(entries, 1):
        try:
            step: dict[str, Any] = {"request": har_request(entry)}
        except Exception as exc:  # this entry's own E1, the session goes on
            step = {"output": f"<HAR entry {index} unreadable: {one_line(exc)}>"}
        response = entry.get("response") if isinstance(entry, Mapping) else None
        if isinstance(response, Mapping):
            content = response.get("content")
            text = content.get("text") if isinstance(content, Mapping) else None
            status = response.get("status")
            step["response"] = {
                "status": status if isinstance(status, int) else None,
                "body": text if isinstance(text, str) else None,
            }
        steps.append(step)
    record: dict[str, Any] = {"id": "har-session", "steps": steps}
    if instruction:
        record["instruction"] = instruction
    return record


def read_har_session(stream: IO[str]) -> Iterator[Unit]:
    """The whole capture as one audit unit (see :func:`har_session_record`); the file is
    read whole, unlike :func:`read_har`, since its steps are checked together."""
    try:
        har = json.load(stream)
        record = har_session_record(har)
    except Exception as exc:
        reason = str(exc) if isinstance(exc, ValueError) else one_line(exc)
        yield Unit(1, error=f"HAR session: {reason}", id="har-session")
        return
    yield Unit(1, record, id="har-session")
