"""Does anything a model or a log can hold crash, hang or blow up autofeedback?

Generates N inputs (default 1,000,000) from a fixed seed and runs each through the code
that meets it in production, counting:

* crashes: an exception that escapes (``Scanner.iter_findings``, the audit of a JSONL
  line or HAR entry, the origin check, the redaction) — goal 0;
* contained errors: an exception the per-record isolation caught and reported as an E1
  finding or a record ``error`` (the product kept going; each is still a bug to fix
  at its source, so they are counted and the first few shown);
* hangs: an input that took more than 1 s — goal 0 (an alarm stops one at 20 s);
* peak memory (max RSS) and RSS at every 10 % — goal bounded.

Input families (mixed by fixed weights):

* ``output``: raw LLM text in every format the parser reads (``<API>`` tags, Python
  calls, API-Request, JSON function calls, LangChain Action, OpenAI tool_calls,
  RestGPT, plain HTTP, curl, Markdown fences), randomly edited: characters inserted,
  deleted, replaced from a hostile alphabet (brackets, quotes, NUL, surrogates, RTL
  marks), cut, duplicated; plus rare hostile ones (100,000-deep brackets, 10 MB strings);
* ``call`` / ``request``: structured records with random JSON values and URLs (user
  info, IPv6 literals, broken brackets, odd ports, IDN hosts);
* ``jsonl``: audit log lines, valid and broken, through ``audit_lines``;
* ``har``: HAR entries through ``read_har`` + ``audit_units`` (a few files break
  part-way);
* ``url``: URLs through the origin check and the redaction;
* ``spec``: hostile spec texts (deep nesting, huge numbers and enums, alias bombs, bad
  servers, catastrophic or invalid patterns, mutated real text) loaded, then scanned
  against; 2 % of ``jsonl`` lines carry hostile schemas in their own ``tools``.

Everything runs with ``retriever=None`` (structural checks: the semantic ones only
rank names with the model, they do not parse anything).

    nice python benchmarks/fuzz.py                 # 1,000,000 inputs, writes RESULTS.md
    python benchmarks/fuzz.py -n 20000 --no-write  # a quick look
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, Scanner, SpecError
from autofeedback.audit._audit import audit_lines, audit_units
from autofeedback.audit._inputs import read_har
from autofeedback.core._origins import Origins, origin_of
from autofeedback.core._redact import redact
from benchmarks._results import write_section

ROOT = Path(__file__).resolve().parents[1]
HANG_S = 1.0
ALARM_S = 20

# -- generators ---------------------------------------------------------------------

NAMES = [
    "searchBooks",
    "search_books",
    "getBook",
    "createOrder",
    "get_weather",
    "listReviews",
    "GET /books",
    "a" * 300,
    "",
    "x.y.z",
    "__import__",
    "os.system",
    "eval",
    "Ω",
]
KEYS = [
    "query",
    "limit",
    "limt",
    "genre",
    "published_after",
    "bookId",
    "book_id",
    "quantity",
    "shipping",
    "sort",
    "api_key",
    "password",
    "Authorization",
    "",
    "__class__",
    "k" * 200,
]
HOSTILE = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    '"',
    "'",
    "`",
    "\\",
    "\x00",
    "\n",
    "\r",
    "\t",
    ":",
    "=",
    ",",
    "@",
    "/",
    "?",
    "#",
    "%",
    "&",
    "\u202e",
    "\ufeff",
    "\ud800",
    "\udfff",
    "é",
    "𝔘",
    "…",
    " ",
    "0",
    "-",
    "e",
    "`" * 3,
    "</API>",
    "<API>",
    "http://",
    "[::1]",
    "1[2",
    "%00",
    "\u0085",
]
HOSTS = [
    "127.0.0.1:8080",
    "127.0.0.1",
    "[::1]:8080",
    "[::1",
    "1[27.0.0.1:8080",
    "user:PASSWORD@127.0.0.1:8080",
    "@",
    "EXAMPLE.org.",
    "bücher.de",
    "127.0.0.1:99999",
    "127.0.0.1:-1",
    "127.0.0.1:abc",
    "[fe80::1%25eth0]:80",
    "",
    "a" * 300,
    "xn--",
    "[]",
    "[:::]",
]
PATHS = [
    "/books",
    "/books/7",
    "/books/{id}",
    "/orders",
    "/orders/1/reviews",
    "/",
    "",
    "//x",
    "/%zz",
    "/books?query=dune&limit=ten",
    "/" + "a/" * 200,
    "/books/../../etc/passwd",
]


def json_value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 4 or r < 0.55:
        return rng.choice(
            [
                None,
                True,
                False,
                0,
                -1,
                7,
                2**70,
                1.5,
                float("1e308"),
                "",
                "dune",
                "ten",
                "2020-01-01",
                "x" * rng.randint(0, 50),
                rng.choice(HOSTILE) * rng.randint(1, 5),
            ]
        )
    if r < 0.8:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def literal(rng: random.Random) -> str:
    v = json_value(rng, 3)
    if isinstance(v, str):
        return repr(v) if rng.random() < 0.7 else json.dumps(v)
    return repr(v) if rng.random() < 0.5 else json.dumps(v)


def args_text(rng: random.Random) -> str:
    return ", ".join(f"{rng.choice(KEYS)}={literal(rng)}" for _ in range(rng.randint(0, 4)))


def url(rng: random.Random) -> str:
    scheme = rng.choice(["http://", "https://", "HTTP://", "ftp://", "", "//", "http:/"])
    q = "&".join(
        f"{rng.choice(KEYS)}={rng.choice(['5', 'ten', 'dune', 'K3Y', '%zz', ''])}"
        for _ in range(rng.randint(0, 3))
    )
    return scheme + rng.choice(HOSTS) + rng.choice(PATHS) + (f"?{q}" if q else "")


def json_args(rng: random.Random) -> str:
    return json.dumps({rng.choice(KEYS): json_value(rng) for _ in range(rng.randint(0, 4))})


def formatted_output(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    k = rng.randrange(14)
    if k == 0:
        return f"<API>{name}({args_text(rng)})</API>"
    if k == 1:
        return f"{name}({args_text(rng)})"
    if k == 2:
        return f"API-Request: [{name}({args_text(rng)})]"
    if k == 3:
        return json.dumps({"name": name, "arguments": json_value(rng)})
    if k == 4:
        return f"Action: {name}\nAction Input: {json_args(rng)}"
    if k == 5:
        call = {"type": "function", "function": {"name": name, "arguments": json_args(rng)}}
        return json.dumps({"role": "assistant", "tool_calls": [call]})
    if k == 6:
        payload = {"url": url(rng), "params": json_value(rng), "data": json_value(rng)}
        return f"Operation: {rng.choice(['GET', 'POST', 'get', 'FETCH'])}\nInput: " + json.dumps(
            payload
        )
    if k == 7:
        return f"{rng.choice(['GET', 'POST', 'DELETE', 'get'])} {rng.choice([url(rng), *PATHS])}"
    if k == 8:
        data = json_args(rng)
        return (
            f"curl -X {rng.choice(['POST', 'GET'])} {url(rng)} "
            f"-H 'Content-Type: application/json' -H 'Authorization: Bearer s3cr3t' -d '{data}'"
        )
    if k == 12:  # an upload as curl sends it: form fields, a file, cookies
        return (
            f"curl {url(rng)} -F 'attrs={json_args(rng)}' -F file=@{rng.choice(NAMES)}.txt "
            f"-b 'page={literal(rng)}; sid=s3cr3t' -F{rng.choice(['', ' ', '='])}"
        )
    if k == 13:  # an HTTP client call in Python code
        method = rng.choice(["get", "post", "request", "put", "delete"])
        first = f"{rng.choice(['GET', 'POST', 7])!r}, " if method == "request" else ""
        keyword = rng.choice(["json", "params", "data", "headers", "cookies", "files", "x"])
        pairs = ", ".join(f"{rng.choice(KEYS)!r}: {literal(rng)}" for _ in range(rng.randint(0, 4)))
        return (
            f"{rng.choice(['requests', 'httpx', 'session', 'cache'])}.{method}("
            f"{first}{url(rng)!r}, {keyword}={{{pairs}}}, timeout={literal(rng)})"
        )
    if k == 9:
        inner, fence = formatted_output(rng), rng.choice(["json", "python", "bash", ""])
        return f"Sure! Here is the call:\n```{fence}\n{inner}\n```"
    if k == 10:
        return " then ".join(formatted_output(rng) for _ in range(rng.randint(2, 3)))
    return "".join(rng.choice(HOSTILE) for _ in range(rng.randint(0, 40)))


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(0, 4)):
        if not text:
            text = rng.choice(HOSTILE)
            continue
        i = rng.randrange(len(text) + 1)
        op = rng.randrange(6)
        if op == 0:
            text = text[:i] + rng.choice(HOSTILE) + text[i:]
        elif op == 1:
            text = text[:i] + text[i + rng.randint(1, 5) :]
        elif op == 2:
            text = text[:i] + rng.choice(HOSTILE) + text[i + 1 :]
        elif op == 3:
            text = text[:i]
        elif op == 4:
            j = rng.randrange(len(text) + 1)
            text = text[:i] + text[min(i, j) : max(i, j)] + text[i:]
        else:
            text = text[i:] + text[:i]
    return text


def hostile_output(rng: random.Random) -> str:
    k = rng.randrange(10)
    if k == 8:  # an upload of 5,000 parts, as curl would send it (under its length cap)
        return "curl http://127.0.0.1/orders " + " ".join(f"-F f{i}=v{i}" for i in range(5_000))
    if k == 9:  # 50,000 cookies in one header (each a value a redaction must mask)
        cookies = "; ".join(f"c{i}=value{i}" for i in range(50_000))
        return json.dumps({"method": "GET", "url": "/books", "headers": {"Cookie": cookies}})
    if k == 6:  # a quoted credential that never closes: catastrophic for a naive regex
        return '<API>login(password="' + "\\" * 50_000 + "x)</API>"
    if k == 7:
        return json.dumps({"name": "f", "arguments": {"password": "\\" * 100_000}})
    if k == 0:
        return "(" * 100_000 + ")" * rng.choice([0, 100_000])
    if k == 1:
        return "[" * 100_000
    if k == 2:
        return "<API>f(x='" + "a" * 10_000_000 + "')</API>"
    if k == 3:
        return '{"name": "f", "arguments": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"
    if k == 4:
        return "\x00" * 1_000_000
    return "<API>" * 200_000


def stream_events(rng: random.Random) -> list[Any]:
    """A streamed answer's events as a log keeps them (OpenAI chunks or Anthropic
    events), their pieces cut anywhere and their fields at times replaced."""
    arguments = json.dumps({"query": literal(rng), "limit": json_value(rng)})
    cuts = sorted(rng.sample(range(len(arguments) + 1), min(3, len(arguments) + 1)))
    pieces = [arguments[a:b] for a, b in zip([0, *cuts], [*cuts, len(arguments)], strict=True)]
    if rng.random() < 0.5:
        call = {"index": 0, "id": "c1", "function": {"name": rng.choice(NAMES), "arguments": ""}}
        events: list[Any] = [{"object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": {"tool_calls": [call]}}]}]  # fmt: skip
        for piece in pieces:
            delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
            events.append(
                {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
            )
    else:
        block = {"type": "tool_use", "id": "t1", "name": rng.choice(NAMES), "input": {}}
        events = [{"type": "content_block_start", "index": 0, "content_block": block}]
        events += [
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": p}}
            for p in pieces
        ]  # fmt: skip
    for _ in range(rng.randrange(3)):
        event = rng.choice(events)
        event[rng.choice(["index", "choices", "delta", "type", "content_block"])] = json_value(rng)
    return events


def record_line(rng: random.Random) -> str:
    k = rng.randrange(9)
    if k == 0:
        record: Any = {"output": mutate(rng, formatted_output(rng))}
    elif k == 1:
        record = {"call": {"name": rng.choice(NAMES), "arguments": json_value(rng)}}
    elif k == 2:
        record = {
            "request": {
                "method": rng.choice(["GET", "POST", "get", "", 7]),
                "url": url(rng),
                "params": json_value(rng),
                "headers": {"Authorization": "Bearer tok3n", rng.choice(KEYS): "v"},
                "json": json_value(rng),
            }
        }
    elif k == 3:
        record = json_value(rng)
    elif k == 4:
        record = {
            "tools": [{"name": rng.choice(NAMES), "parameters": json_value(rng)}],
            "call": {"name": rng.choice(NAMES), "arguments": json_value(rng)},
        }
    elif k == 5:
        record = {"id": json_value(rng), "instruction": json_value(rng), "output": literal(rng)}
    elif k == 8:
        record = {"output": stream_events(rng)}
    else:
        record = {"call": {"name": "searchBooks", "arguments": {"query": "dune"}}}
    text = json.dumps(record)
    return mutate(rng, text) if rng.random() < 0.3 else text


def har_entry(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return json_value(rng)
    return {
        "request": {
            "method": rng.choice(["GET", "POST", "", None]),
            "url": url(rng),
            "headers": [{"name": rng.choice(KEYS), "value": literal(rng)}],
            "queryString": rng.choice([[], [{"name": "query", "value": "dune"}], "x"]),
            "postData": {
                "mimeType": rng.choice(["application/json", "text/plain", "multipart/form-data"]),
                "text": json_args(rng) if rng.random() < 0.7 else mutate(rng, json_args(rng)),
            },
        }
    }


# -- hostile specs and per-record tools ------------------------------------------------

PATTERNS = [
    "^(a+)+$",  # catastrophic on a backtracking engine
    "(x+x+)+y",
    "^(\\w+\\s?)*$",
    "\\p{L}+",
    "(",  # not a regex at all
    "[",
    "(?<=a+)b",
    "^[a-z]{1,255}$",
    "a{1000000}",
]
NUMBERS: list[Any] = [1e308, -1e308, 5e-324, 0, -1, 10**400, "1e999", True, None]


def hostile_schema(rng: random.Random, depth: int = 0) -> Any:
    """A parameter schema from a spec's or a log record's hostile author."""
    k = rng.randrange(10)
    if k == 0:  # nesting, up to far past any limit
        levels = rng.choice([5, 50, 127, 129, 1_000, 5_000])
        return f"__DEEP_{levels}__"  # spliced in as text by _dumps: json.dumps recurses
    if k == 1:  # enums, big ones rarely
        n = rng.choice([3, 100, 1_000, 1_000, 30_000]) if rng.random() < 0.99 else 100_000
        return {"type": "string", "enum": [f"v{i}" for i in range(n)]}
    if k == 2:
        return {
            "type": rng.choice(["number", "integer", "strng", ["string", 5], 7]),
            rng.choice(["minimum", "maximum", "multipleOf", "exclusiveMinimum"]): rng.choice(
                NUMBERS
            ),
        }
    if k == 3:  # huge strings
        size = rng.choice([1_000, 100_000, 1_000_000])
        return {"type": "string", "description": "d" * size, "default": "x" * (size // 10)}
    if k == 4:  # patterns: catastrophic, invalid, unsupported
        return {"type": "string", "pattern": rng.choice(PATTERNS), "maxLength": 64}
    if k == 5:
        return {"type": "string", "format": rng.choice(["date", "email", "uri", "nope", 5])}
    if k == 6 and depth < 3:
        return {rng.choice(["oneOf", "anyOf", "allOf"]): [hostile_schema(rng, depth + 1)]}
    if k == 7:
        return {"type": "array", "items": rng.choice([5, [], {"type": "integer"}, "x"])}
    if k == 8:
        return {"type": "object", "properties": rng.choice([[], "x", {"": {}}]), "required": "a"}
    return json_value(rng)


_DEEP = re.compile(r'"__DEEP_(\d+)__"')


def _deep(m: re.Match[str]) -> str:
    levels = int(m.group(1))
    return '{"type": "object", "properties": {"a": ' * levels + '{"type": "string"}' + "}}" * levels


def _dumps(value: Any) -> str:
    return _DEEP.sub(_deep, json.dumps(value))


def hostile_value(rng: random.Random) -> Any:
    return rng.choice(
        ["a" * 40 + "!", "v7", 10**30, -0.0, "x" * 100_000, [1] * 1_000, {"a": {"a": "b"}}, ""]
    )


def hostile_tools_line(rng: random.Random) -> str:
    """A JSONL record whose own ``tools`` are hostile (one log line is enough)."""
    record = {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": rng.choice(NAMES),
                    "parameters": {
                        "type": "object",
                        "properties": {"p": hostile_schema(rng)},
                        "required": rng.choice([["p"], [], "p"]),
                    },
                },
            }
        ],
        "call": {"name": rng.choice(NAMES), "arguments": {"p": hostile_value(rng)}},
    }
    return _dumps(record)


SERVERS = [
    "https://api.example.org/v1",
    "http://[::1",
    "http://example.org:99999",
    "//x",
    "{scheme}://{host}",
    "http://user:pass@[v1.x]/",
    "",
]


def _nested_yaml(levels: int, style: str) -> str:
    if style == "flow":
        return "openapi: 3.0.0\nx: " + "[" * levels + "]" * levels + "\npaths: {}\n"
    return (
        "openapi: 3.0.0\nx:\n"
        + "".join(" " * i + "-\n" for i in range(1, levels))
        + ("paths: {}\n")
    )


def hostile_spec(rng: random.Random, bookshop_text: str) -> str:
    """A spec file's text: a hostile document, or the bookshop with a hostile part."""
    k = rng.randrange(8)
    if k == 0:
        levels = rng.choice([100, 129, 1_000, 3_000, 20_000]) if rng.random() < 0.995 else 50_000
        # block style grows with the square of the depth: 3,000 levels is 4.5 MB of text
        return _nested_yaml(levels, "flow" if levels > 3_000 else rng.choice(["flow", "block"]))
    if k == 1:
        depth = rng.choice([100, 129, 1_000, 5_000])
        return '{"openapi": "3.0.0", "x": ' + "[" * depth + "]" * depth + ', "paths": {}}'
    if k == 2:
        digits = "9" * rng.choice([100, 4_300, 5_000])
        return rng.choice(
            [
                f"openapi: 3.0.0\nx: {digits}\npaths: {{}}\n",
                f'{{"openapi": "3.0.0", "x": {digits}}}',
            ]
        )
    if k == 3:  # an alias bomb
        lines = ["openapi: 3.0.0", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
        return "\n".join(lines) + "\npaths: {}\n"
    if k == 4:
        return "\ufeff" * rng.randrange(2) + mutate(rng, bookshop_text)
    # the bookshop with a hostile server or a hostile parameter schema
    doc = {
        "openapi": "3.0.3",
        "servers": [{"url": rng.choice(SERVERS)}],
        "paths": {
            "/books": {
                "get": {
                    "operationId": "searchBooks",
                    "parameters": [{"name": "q", "in": "query", "schema": hostile_schema(rng)}],
                    "responses": {"200": {"description": "ok"}},
                },
                "post": {
                    "operationId": "addBook",
                    "requestBody": {
                        "content": {"application/json": {"schema": hostile_schema(rng)}}
                    },
                    "responses": {"200": {"description": "ok"}},
                },
            }
        },
    }
    return _dumps(doc)


# -- running --------------------------------------------------------------------------


class _Alarm(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Alarm


class Tally:
    def __init__(self) -> None:
        self.inputs: Counter[str] = Counter()
        self.crashes: Counter[str] = Counter()
        self.contained: Counter[str] = Counter()
        self.hangs: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.worst: tuple[float, str] = (0.0, "")
        self.rss: list[int] = []

    def note(self, kind: str, what: str, sample: Any) -> None:
        key = f"{kind}: {what}"
        if key not in self.examples and len(self.examples) < 40:
            # the samples hold made-up credentials; a report shows none, even those
            self.examples[key] = str(redact(repr(sample)[:160]))


def _timed(tally: Tally, family: str, count: int, sample: Any, fn: Callable[[], None]) -> None:
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, ALARM_S)
    try:
        fn()
    except _Alarm:
        tally.hangs[family] += count
        tally.note("hang", family, sample)
    except Exception as exc:
        tally.crashes[family] += count
        where = traceback.extract_tb(exc.__traceback__)[-1]
        tally.note("crash", f"{family} {type(exc).__name__} at {where.name}:{where.lineno}", sample)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    took = time.perf_counter() - start
    tally.inputs[family] += count
    if took > HANG_S * count:
        tally.hangs[family] += 1
        tally.note("hang", f"{family} {took:.2f}s", sample)
    if took / count > tally.worst[0]:
        tally.worst = (took / count, family)


def _contained_finding(tally: Tally, family: str, findings: list[Any], sample: Any) -> None:
    for f in findings:
        if f.code == "E1" and f.message.startswith("the output could not be checked"):
            tally.contained[family] += 1
            tally.note("contained", f"{family} {f.message[32:90]}", sample)


def _contained_result(
    tally: Tally, family: str, results: list[Any], samples: list[Any], first: int = 1
) -> None:
    for r in results:
        if r.error is not None and r.error.startswith("the record could not be"):
            tally.contained[family] += 1
            i = r.line - first
            sample = samples[i] if 0 <= i < len(samples) else samples[0]
            tally.note("contained", f"{family} {r.error[:90]}", sample)


def run(n: int, seed: int) -> Tally:
    rng = random.Random(seed)
    bookshop = ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml")
    bookshop_text = (ROOT / "specs" / "examples" / "bookshop.yaml").read_text(encoding="utf-8")
    scanner = Scanner(bookshop, retriever=None)
    allowed = Origins.of(bookshop.servers, extra=["example.org", "[::1]:8080"])
    tally = Tally()
    signal.signal(signal.SIGALRM, _alarm)
    checkpoints = {n * k // 10 for k in range(1, 11)}
    done = 0
    while done < n:
        r = rng.random()
        if r < 0.000_1:
            text = hostile_output(rng)

            def go_hostile(text: str = text) -> None:
                _contained_finding(tally, "hostile", list(scanner.iter_findings(text)), text)

            _timed(tally, "hostile", 1, text[:100], go_hostile)
            done += 1
        elif r < 0.015:
            spec_text = hostile_spec(rng, bookshop_text)
            probe = rng.choice(
                [
                    "GET /books?q=" + "a" * 40 + "!",
                    '{"method": "POST", "url": "/books", "json": {"a": "v7"}}',
                    "<API>searchBooks(q='v1')</API>",
                ]
            )

            def go_spec(spec_text: str = spec_text, probe: str = probe) -> None:
                try:
                    catalog = ApiCatalog.from_obj(spec_text, source="<fuzz spec>")
                except SpecError:
                    return  # refused at load, with a message: what a bad spec should get
                found = list(Scanner(catalog, retriever=None).iter_findings(probe))
                _contained_finding(tally, "spec", found, spec_text[:100])

            _timed(tally, "spec", 1, spec_text[:100], go_spec)
            done += 1
        elif r < 0.60:
            text = formatted_output(rng)
            text = mutate(rng, text) if rng.random() < 0.7 else text

            def go_output(text: str = text) -> None:
                found = list(scanner.iter_findings(text, instruction="find books"))
                _contained_finding(tally, "output", found, text)

            _timed(tally, "output", 1, text, go_output)
            done += 1
        elif r < 0.72:
            rec: Any = (
                {"name": rng.choice(NAMES), "arguments": json_value(rng)}
                if rng.random() < 0.5
                else {
                    "method": rng.choice(["GET", "POST", "", 7, None]),
                    "url": url(rng),
                    "params": json_value(rng),
                    "headers": json_value(rng),
                    "json": json_value(rng),
                }
            )
            if "url" in rec and rng.random() < 0.3:  # cookies, a multipart upload
                rec["cookies"] = json_value(rng)
                rec["headers"] = {
                    "Cookie": "; ".join(f"{k}={literal(rng)}" for k in rng.sample(KEYS, 3)),
                    "Content-Type": "multipart/form-data; boundary=" + rng.choice(["b", '"b"', ""]),
                }
                parts = (
                    f'--b\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{literal(rng)}\r\n'
                    for k in rng.sample(KEYS, 3)
                )
                rec["json"] = None
                rec["body"] = mutate(rng, "".join(parts) + "--b--\r\n")

            def go_structured(rec: Any = rec) -> None:
                _contained_finding(tally, "structured", list(scanner.iter_findings(rec)), rec)

            _timed(tally, "structured", 1, rec, go_structured)
            done += 1
        elif r < 0.87:
            lines = [
                hostile_tools_line(rng) if rng.random() < 0.02 else record_line(rng)
                for _ in range(50)
            ]

            def go_jsonl(lines: list[str] = lines) -> None:
                results = list(audit_lines(lines, bookshop, retriever=None))
                # a blank line is skipped, as jq does (a mutation can blank a line); the
                # first line's BOM is the file's, no part of a record
                first = [lines[0].removeprefix("\ufeff"), *lines[1:]]
                records = sum(1 for line in first if line.strip())
                if len(results) != records:
                    raise AssertionError(f"{records} records gave {len(results)} results")
                _contained_result(tally, "jsonl", results, lines)

            _timed(tally, "jsonl", len(lines), lines[0], go_jsonl)
            done += len(lines)
        elif r < 0.95:
            entries = [har_entry(rng) for _ in range(20)]
            text = json.dumps({"log": {"version": "1.2", "entries": entries}})
            if rng.random() < 0.2:
                text = text[: rng.randrange(len(text))]  # a capture cut part-way

            def go_har(text: str = text) -> None:
                units = list(read_har(io.StringIO(text)))
                results = list(audit_units(units, bookshop, retriever=None))
                _contained_result(tally, "har", results, [text[:100]])

            _timed(tally, "har", len(entries), text[:100], go_har)
            done += len(entries)
        else:
            u = mutate(rng, url(rng)) if rng.random() < 0.5 else url(rng)

            def go_url(u: str = u) -> None:
                _ = u in allowed, origin_of(u), redact(u), redact({"url": u, "password": u})

            _timed(tally, "url", 1, u, go_url)
            done += 1
        while checkpoints and done >= min(checkpoints):
            checkpoints.discard(min(checkpoints))
            tally.rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            print(
                f"{done:>9} inputs  crashes {sum(tally.crashes.values())}  "
                f"contained {sum(tally.contained.values())}  hangs {sum(tally.hangs.values())}  "
                f"max RSS {tally.rss[-1] / 1024:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    return tally


def table(tally: Tally, seconds: float) -> str:
    families = ["output", "structured", "jsonl", "har", "url", "hostile", "spec"]
    total = sum(tally.inputs.values())
    lines = [
        "| inputs | of them | crashes | contained errors | hangs (> 1 s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for fam in families:
        lines.append(
            f"| {fam} | {tally.inputs[fam]:,} | {tally.crashes[fam]} | "
            f"{tally.contained[fam]} | {tally.hangs[fam]} |"
        )
    lines.append(
        f"| **all** | **{total:,}** | **{sum(tally.crashes.values())}** | "
        f"**{sum(tally.contained.values())}** | **{sum(tally.hangs.values())}** |"
    )
    rss = ", ".join(f"{x / 1024:.0f}" for x in tally.rss)
    lines += [
        "",
        f"{total:,} inputs in {seconds:,.0f} s ({total / seconds:,.0f}/s, one process); "
        f"slowest input {tally.worst[0] * 1000:.0f} ms ({tally.worst[1]}).",
        f"Peak memory (max RSS, MiB) after each tenth of the run: {rss}.",
        "",
        "*Crashes* are exceptions that escaped; *contained errors* are exceptions the "
        "per-record isolation turned into an E1 finding or a record `error` (the run went "
        "on; each is a bug to fix where it starts). Hostile inputs: 100,000-deep brackets, "
        "10 MB strings, 1 MB of NUL bytes, 50,000-deep JSON, 200,000 `<API>` tags, "
        "unclosed quoted credentials of 50,000 backslashes, a curl upload of 5,000 form "
        "parts, 50,000 cookies in one header. *spec*: spec texts loaded and "
        "then scanned against (YAML nested up to 50,000 deep, JSON 5,000 deep, 5,000-digit "
        "numbers, alias bombs, mutated bookshop text with BOMs, servers such as "
        "`http://[::1`, parameter and body schemas nested 5,000 deep, 100,000-value enums, "
        "extreme numbers, 1 MB strings, catastrophic / invalid / `\\p{L}` patterns); a "
        "refused spec (`SpecError`) is the expected outcome, anything else escaping is a "
        "crash. 2 % of *jsonl* lines carry such hostile schemas in their own `tools`.",
    ]
    if tally.examples:
        lines += ["", "First examples:", ""]
        lines += [f"* {k}: `{v}`" for k, v in sorted(tally.examples.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("-n", type=int, default=1_000_000, help="number of inputs")
    ap.add_argument("--seed", type=int, default=20260823)
    ap.add_argument("--no-write", action="store_true", help="do not write RESULTS.md")
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    start = time.perf_counter()
    tally = run(args.n, args.seed)
    seconds = time.perf_counter() - start
    body = table(tally, seconds)
    print(body)
    if not args.no_write:
        command = "nice python benchmarks/fuzz.py" + (
            f" -n {args.n}" if args.n != 1_000_000 else ""
        )
        write_section("Fuzzing: crashes, hangs, memory", command, body)
    return 1 if sum(tally.crashes.values()) or sum(tally.hangs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
