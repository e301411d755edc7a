"""The sandbox server: a real HTTP server on 127.0.0.1, real requests."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
import requests

from autofeedback import ApiCatalog, ConfigurationError, Operation, Parameter, Response
from autofeedback.catalog._openapi import function_path
from autofeedback.catalog._schema import sample_value, sanitize_schema
from autofeedback.serve._sandbox import DEFAULT_ERROR_CODES, MAX_BODY_BYTES, Sandbox, run_sandbox

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"
AUDIT_EXAMPLES = ROOT / "specs" / "examples" / "requests.jsonl"


@pytest.fixture(scope="module")
def verbose(bookshop: ApiCatalog) -> Iterator[Sandbox]:
    with Sandbox(bookshop) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def terse(bookshop: ApiCatalog) -> Iterator[Sandbox]:
    with Sandbox(bookshop, terse=True) as sandbox:
        yield sandbox


def _response_schema(catalog: ApiCatalog, name: str) -> dict[str, Any]:
    op = catalog.get(name)
    assert op is not None
    [ok] = [r for r in op.responses if r.status.startswith("2")]
    assert ok.schema is not None
    return sanitize_schema(ok.schema)


# -- valid requests ------------------------------------------------------------------


def test_binds_to_loopback_on_an_ephemeral_port(verbose: Sandbox) -> None:
    assert verbose.url.startswith("http://127.0.0.1:")
    assert verbose.port > 0
    with pytest.raises(ConfigurationError, match="loopback"):
        Sandbox(ApiCatalog([Operation("ping")]), host="0.0.0.0")


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "operation"),
    [
        ("GET", "/books?query=dune&genre=fiction&limit=5", {}, 200, "searchBooks"),
        ("GET", "/books/7", {}, 200, "getBook"),
        ("GET", "/books/7/reviews?min_rating=4&page=2", {}, 200, "listReviews"),
        ("POST", "/orders", {"json": {"book_id": 7, "quantity": 2}}, 201, "createOrder"),
        ("GET", "/orders/ORD-123456", {}, 200, "getOrder"),
        ("DELETE", "/orders/ORD-123456", {}, 200, "cancelOrder"),
        ("GET", "/genres", {}, 200, "listGenres"),
    ],
)
def test_valid_requests_get_a_documented_2xx_with_a_conforming_body(
    verbose: Sandbox,
    bookshop: ApiCatalog,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    operation: str,
) -> None:
    r = requests.request(method, verbose.url + path, timeout=10, **kwargs)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"] == "application/json"
    jsonschema.validate(r.json(), _response_schema(bookshop, operation))
    assert verbose.requests_seen[-1].operation == operation
    assert verbose.requests_seen[-1].status == status


def test_the_documented_example_is_the_body(verbose: Sandbox) -> None:
    r = requests.get(verbose.url + "/books", params={"query": "dune"}, timeout=10)
    assert r.json()["books"][0]["title"] == "Dune"


def test_generated_bodies_are_deterministic_per_seed(bookshop: ApiCatalog) -> None:
    with Sandbox(bookshop, seed=1) as a, Sandbox(bookshop, seed=1) as b:
        first = requests.get(a.url + "/books/7", timeout=10)
        assert first.status_code == 200
        assert first.json() == requests.get(b.url + "/books/7", timeout=10).json()


def test_the_server_prefix_of_the_spec_is_accepted() -> None:
    found = Response("200", example={"results": [{"id": 550, "title": "Fight Club"}]})
    catalog = ApiCatalog(
        [
            Operation("searchMovie", method="GET", path="/search/movie", responses=(found,)),
            Operation("getMovie", method="GET", path="/movie/{movie_id}"),
        ],
        servers=["https://api.themoviedb.org/3"],
    )
    with Sandbox(catalog) as sandbox:
        assert requests.get(sandbox.url + "/3/movie/550", timeout=10).status_code == 200
        assert requests.get(sandbox.url + "/movie/550", timeout=10).status_code == 200
        # an id no answer ever showed is a 404 under either prefix
        assert requests.get(sandbox.url + "/3/movie/551", timeout=10).status_code == 404


def test_concurrent_requests_are_all_answered(verbose: Sandbox) -> None:
    def get(i: int) -> int:
        return requests.get(verbose.url + f"/books/7/reviews?page={i + 1}", timeout=10).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(get, range(32))) == {200}


# -- invalid requests, verbose ------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "kind", "location"),
    [
        ("GET", "/books", {}, "missing_parameter", ["query", "query"]),
        ("GET", "/books?query=dune&limit=ten", {}, "wrong_type", ["query", "limit"]),
        ("GET", "/books?query=dune&limit=500", {}, "bad_value", ["query", "limit"]),
        ("GET", "/books?query=dune&genre=scifi", {}, "bad_value", ["query", "genre"]),
        (
            "GET",
            "/books?query=dune&published_after=March%202020",
            {},
            "bad_format",
            ["query", "published_after"],
        ),
        ("GET", "/books?query=dune&limt=5", {}, "unknown_parameter", ["query", "limt"]),
        ("GET", "/books/seven", {}, "wrong_type", ["path", "bookId"]),
        ("GET", "/orders/123", {}, "bad_format", ["path", "orderId"]),
        ("POST", "/orders", {"json": {"quantity": 2}}, "missing_parameter", ["body", "book_id"]),
        (
            "POST",
            "/orders",
            {"json": {"book_id": 7, "quantity": 2, "colour": "red"}},
            "unknown_parameter",
            ["body", "colour"],
        ),
        ("POST", "/orders", {"json": {"book_id": "7", "quantity": 2}}, "wrong_type", None),
        ("POST", "/orders", {}, "missing_parameter", ["body"]),
    ],
)
def test_invalid_requests_are_explained_in_verbose_mode(
    verbose: Sandbox,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    kind: str,
    location: list[str] | None,
) -> None:
    r = requests.request(method, verbose.url + path, timeout=10, **kwargs)
    assert r.status_code == 400
    body = r.json()
    assert body["error"] == kind
    assert body["message"]
    assert isinstance(body["info_code"], int)
    if location is not None:
        assert body["errors"][0]["location"] == location
    assert verbose.requests_seen[-1].kind == kind


def test_every_error_is_listed(verbose: Sandbox) -> None:
    r = requests.post(
        verbose.url + "/orders", json={"book_id": 0, "quantity": 99, "shipping": "x"}, timeout=10
    )
    kinds = {e["kind"] for e in r.json()["errors"]}
    assert kinds == {"bad_value"}
    assert len(r.json()["errors"]) == 3


def test_unknown_path_and_wrong_method(verbose: Sandbox) -> None:
    r = requests.get(verbose.url + "/authors/1", timeout=10)
    assert r.status_code == 404 and r.json()["error"] == "unknown_path"
    r = requests.put(verbose.url + "/orders/ORD-123456", json={}, timeout=10)
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"
    assert r.headers["Allow"] == "DELETE, GET"


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"\xff\xfe\x00garbage", "application/json"),
        (b"book_id=7", "application/x-www-form-urlencoded"),
        (b"[1, 2", None),
    ],
)
def test_garbage_bodies_are_400(verbose: Sandbox, data: bytes, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    r = requests.post(verbose.url + "/orders", data=data, headers=headers, timeout=10)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_body"


def test_huge_bodies_are_refused(verbose: Sandbox) -> None:
    r = requests.post(
        verbose.url + "/orders",
        data=b"x" * (MAX_BODY_BYTES + 10),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert r.status_code == 413
    assert r.json()["error"] == "body_too_large"


def test_malformed_http_does_not_crash_the_server(verbose: Sandbox) -> None:
    for raw in (
        b"GET /books HTTP/1.1\r\nContent-Length: banana\r\n\r\n",
        b"NONSENSE\r\n\r\n",
        b"\x00\x01\x02\r\n\r\n",
        b"POST /orders HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
    ):
        with socket.create_connection(("127.0.0.1", verbose.port), timeout=10) as sock:
            sock.sendall(raw)
            reply = sock.recv(4096)
            assert reply, raw
            assert b" 500 " not in reply.split(b"\r\n")[0]
            assert b'"status": 5' not in reply
    assert requests.get(verbose.url + "/genres", timeout=10).status_code == 200


# -- terse mode -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "code"),
    [
        ("GET", "/books", {}, 400, 20001),
        ("GET", "/books?query=dune&published_after=yesterday", {}, 400, 20002),
        ("GET", "/books?query=dune&genre=scifi", {}, 400, 20003),
        ("GET", "/books?query=dune&limit=ten", {}, 400, 20004),
        ("GET", "/books?query=dune&limit=0", {}, 400, 20004),
        ("GET", "/books?query=dune&sort=oldest", {}, 400, 20005),
        ("GET", "/books?query=dune&author=herbert", {}, 400, 20009),
        ("GET", "/books/x", {}, 400, 20010),
        ("GET", "/books/7/reviews?min_rating=6", {}, 400, 20012),
        ("GET", "/books/7/reviews?page=0", {}, 400, 20013),
        ("POST", "/orders", {"json": {"book_id": 7}}, 400, 20020),
        ("POST", "/orders", {"json": {"book_id": 7, "quantity": 11}}, 400, 20021),
        (
            "POST",
            "/orders",
            {"json": {"book_id": 7, "quantity": 1, "shipping": "drone"}},
            400,
            20022,
        ),
        ("POST", "/orders", {"data": b"{oops"}, 400, 20023),
        ("POST", "/orders", {"json": {"book_id": 7, "quantity": 1, "note": "hi"}}, 400, 20024),
        ("POST", "/orders", {"json": {"book_id": "seven", "quantity": 1}}, 400, 20025),
        ("GET", "/orders/12", {}, 400, 20030),
        # no documented code for these: the default table
        ("GET", "/nowhere", {}, 404, DEFAULT_ERROR_CODES["unknown_path"][1]),
        ("PATCH", "/books", {}, 405, DEFAULT_ERROR_CODES["method_not_allowed"][1]),
    ],
)
def test_terse_mode_answers_only_the_documented_code(
    terse: Sandbox, method: str, path: str, kwargs: dict[str, Any], status: int, code: int
) -> None:
    r = requests.request(method, terse.url + path, timeout=10, **kwargs)
    assert r.status_code == status
    assert r.json() == {"info_code": code}


def test_default_codes_when_the_docs_define_none() -> None:
    catalog = ApiCatalog(
        [
            Operation(
                "listItems",
                method="GET",
                path="/items",
                parameters=(
                    Parameter("limit", "query", {"type": "integer"}),
                    Parameter("tag", "query", {"type": "string"}, required=True),
                ),
                responses=(Response("200", "ok", {"type": "array"}), Response("400", "Bad")),
            )
        ]
    )
    with Sandbox(catalog, terse=True, error_codes={"wrong_type": 777}) as sandbox:
        r = requests.get(sandbox.url + "/items", timeout=10)
        assert r.json() == {"info_code": DEFAULT_ERROR_CODES["missing_parameter"][1]}
        r = requests.get(sandbox.url + "/items?tag=a&limit=x", timeout=10)
        assert r.json() == {"info_code": 777}
    with pytest.raises(ConfigurationError, match="unknown error kind"):
        Sandbox(catalog, error_codes={"typo": 1})


def test_documented_example_codes_are_used() -> None:
    catalog = ApiCatalog(
        [
            Operation(
                "convert",
                method="GET",
                path="/convert",
                parameters=(Parameter("amount", "query", {"type": "number"}, required=True),),
                responses=(
                    Response("200", "ok"),
                    Response("422", "amount is not a number", example={"error_code": 31}),
                ),
            )
        ]
    )
    with Sandbox(catalog, terse=True) as sandbox:
        r = requests.get(sandbox.url + "/convert?amount=lots", timeout=10)
        assert (r.status_code, r.json()) == (422, {"error_code": 31})


# -- function-style catalogs --------------------------------------------------------------


def test_function_style_operations_are_post_routes() -> None:
    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "math.factorial",
                "description": "n!",
                "parameters": {
                    "type": "dict",
                    "properties": {"number": {"type": "integer"}},
                    "required": ["number"],
                },
            },
            {"name": "get weather", "description": "Weather", "parameters": {"type": "dict"}},
        ]
    )
    with Sandbox(catalog) as sandbox:
        url = sandbox.url + function_path("math.factorial")
        assert requests.post(url, json={"number": 5}, timeout=10).status_code == 200
        r = requests.post(url, json={"number": "five"}, timeout=10)
        assert (r.status_code, r.json()["error"]) == (400, "wrong_type")
        r = requests.post(url, json={"number": 5, "exact": True}, timeout=10)
        assert (r.status_code, r.json()["error"]) == (400, "unknown_parameter")
        r = requests.post(url, json={}, timeout=10)
        assert (r.status_code, r.json()["error"]) == (400, "missing_parameter")
        assert requests.get(url, timeout=10).status_code == 405
        weather = sandbox.url + function_path("get weather")
        assert requests.post(weather, json={}, timeout=10).status_code == 200
        r = requests.post(sandbox.url + "/math.fact", json={"number": 5}, timeout=10)
        assert r.status_code == 404


# -- the bundled examples and the CLI entry point ----------------------------------------------


def test_the_bundled_audit_examples_name_real_operations(bookshop: ApiCatalog) -> None:
    lines = AUDIT_EXAMPLES.read_text(encoding="utf-8").splitlines()
    records, broken = [], 0
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            broken += 1
    assert broken == 1 and len(records) >= 10
    for record in records:
        assert sum(k in record for k in ("output", "call", "request")) == 1, record
    assert any(r.get("call", {}).get("name") in bookshop for r in records)


def test_run_sandbox_reports_bad_input() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run_sandbox(ROOT / "no-such-spec.yaml", stdout=out, stderr=err) == 2
    assert "no-such-spec.yaml" in err.getvalue()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = io.StringIO()
        assert run_sandbox(BOOKSHOP, port=port, stdout=out, stderr=err) == 2
        assert f"127.0.0.1:{port}" in err.getvalue()
    err = io.StringIO()
    assert run_sandbox(BOOKSHOP, host="192.0.2.1", stdout=out, stderr=err) == 2
    assert "loopback" in err.getvalue()


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_run_sandbox_serves_until_interrupted(stop_signal: int) -> None:
    # a shell without job control starts background jobs (CI's) with SIGINT ignored, and
    # children inherit that; a user's terminal does not, so restore the default here
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from autofeedback.serve._sandbox import run_sandbox; "
        f"sys.exit(run_sandbox({str(BOOKSHOP)!r}, port=0, terse=True, "
        "stdout=sys.stdout, stderr=sys.stderr))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "7 operations" in banner and "terse" in banner, banner
        url = banner.split(" at ")[1].split()[0]
        r = requests.get(url + "/books", timeout=10)
        assert r.json() == {"info_code": 20001}
        assert proc.stdout.readline().strip() == "GET /books 400"
        proc.send_signal(stop_signal)
        # communicate() drains both pipes, so a chatty child cannot block on a full pipe;
        # the generous timeout is for a loaded CI machine, not for the server
        proc.communicate(timeout=90)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


# -- a real spec ---------------------------------------------------------------------------------

DATA = Path(
    os.environ.get("AUTOFEEDBACK_SHARED_DATA")
    or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)


def test_a_sample_request_to_every_tmdb_operation_is_served() -> None:
    spec = DATA / "restbench" / "tmdb_oas.json"
    if not spec.exists():
        pytest.skip(f"shared benchmark data not found at {spec} (set AUTOFEEDBACK_SHARED_DATA)")
    catalog = ApiCatalog.from_file(spec)
    # the ids the detail endpoints' documented examples show (movie_id 550, tv_id 1399):
    # ids the session knows from the start; any other id is a 404 (tested below)
    shown = {
        op.path.rsplit("/", 1)[1].strip("{}"): r.example["id"]
        for op in catalog
        for r in op.responses
        if op.path and op.path.endswith("_id}") and isinstance(r.example, dict)
        if "id" in r.example
    }
    assert {"movie_id": 550, "tv_id": 1399, "person_id": 287}.items() <= shown.items()
    with Sandbox(catalog, terse=True) as sandbox:
        for op in catalog:
            assert op.path is not None and op.method is not None
            path, params = op.path, {}
            for p in op.parameters:
                value = shown.get(p.name, sample_value(sanitize_schema(p.schema)))
                if p.location == "path":
                    path = path.replace("{" + p.name + "}", quote(str(value), safe=""))
                elif p.location == "query" and p.required:
                    params[p.name] = value
            # the spec's server is https://api.themoviedb.org/3: its /3 prefix is accepted
            r = requests.request(op.method, sandbox.url + "/3" + path, params=params, timeout=10)
            assert r.status_code // 100 == 2, (op.name, r.text)
            r = requests.request(
                op.method, sandbox.url + path, params={**params, "bogus_param": "1"}, timeout=10
            )
            assert r.status_code == 400, op.name
        assert len(sandbox.requests_seen) == 2 * len(catalog)


# -- bounded resources -------------------------------------------------------------------


def test_a_silent_client_is_disconnected_and_others_are_served(bookshop: ApiCatalog) -> None:
    with Sandbox(bookshop, client_timeout=0.5) as sandbox:
        silent = socket.create_connection(("127.0.0.1", sandbox.port), timeout=10)
        silent.sendall(b"GET /books?query=dune HTTP/1.1\r\n")  # and then nothing more
        # the server answers others meanwhile
        assert requests.get(sandbox.url + "/books", params={"query": "x"}, timeout=5).ok
        assert silent.recv(1024) == b""  # closed on it, after client_timeout
        silent.close()


def test_a_burst_of_connections_beyond_the_limit_is_all_answered(bookshop: ApiCatalog) -> None:
    async def one(port: int, path: str) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = await reader.read()
        writer.close()
        return data.split(b" ", 2)[1] if data else b""

    async def burst(port: int) -> list[bytes]:
        paths = ["/books?query=dune", "/books?query=dune&limit=ten", "/nowhere"] * 100
        return await asyncio.gather(*(one(port, p) for p in paths))

    # 300 connections at once, 8 served at a time: the rest wait in the backlog
    with Sandbox(bookshop, max_connections=8) as sandbox:
        statuses = asyncio.run(burst(sandbox.port))
        assert requests.get(sandbox.url + "/books", params={"query": "x"}, timeout=5).ok
    assert statuses == [b"200", b"400", b"404"] * 100


def test_limits_must_be_sane(bookshop: ApiCatalog) -> None:
    with pytest.raises(ConfigurationError):
        Sandbox(bookshop, client_timeout=0)
    with pytest.raises(ConfigurationError):
        Sandbox(bookshop, max_connections=0)


def test_an_interrupt_while_a_connection_is_handed_over_stops_the_server(
    bookshop: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `kill` that lands just after the connection's thread started: the slot is released
    once and the interrupt reaches serve_forever (it was swallowed by a ValueError from
    the semaphore, and the sandbox went on serving)."""
    import contextlib
    import socketserver
    import threading

    from autofeedback.serve._sandbox_server import _Server

    handed_over = socketserver.ThreadingMixIn.process_request

    def interrupted(self: Any, request: Any, client_address: Any) -> None:
        handed_over(self, request, client_address)
        raise KeyboardInterrupt

    monkeypatch.setattr(socketserver.ThreadingMixIn, "process_request", interrupted)
    sandbox = Sandbox(bookshop, port=0, terse=True, max_connections=2)
    server = sandbox._bind()
    assert isinstance(server, _Server)

    def ask() -> None:
        # the interrupt shuts the connection down under the answer: that is fine here
        with contextlib.suppress(requests.RequestException):
            requests.get(sandbox.url + "/books", params={"query": "x"}, timeout=10)

    client = threading.Thread(target=ask)
    client.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            server.serve_forever(poll_interval=0.05)
    finally:
        client.join(timeout=15)
        server.server_close()
    # both slots free again: released once by the handler thread, never twice
    assert server.slots.acquire(blocking=False) and server.slots.acquire(blocking=False)


def test_cookies_are_read_as_rfc_6265_reads_them() -> None:
    # a quoted cookie value is the value inside the quotes, and a piece with no name is
    # no cookie: the sandbox reads the header as the scanner does (core._resolve.cookie_args)
    theme = Parameter("theme", "cookie", {"type": "string", "enum": ["dark", "light"]}, True)
    catalog = ApiCatalog([Operation("getHome", method="GET", path="/home", parameters=(theme,))])
    with Sandbox(catalog) as sandbox:

        def status(cookie: str) -> int:
            r = requests.get(sandbox.url + "/home", headers={"Cookie": cookie}, timeout=10)
            return r.status_code

        assert status('theme="dark"') == 200
        assert status("=x; theme=light") == 200
        assert status("theme=blue") == 400
        assert status("mode=dark") == 400
