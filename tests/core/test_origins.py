"""Hosts are origins: scheme, host and port, compared in one canonical form, against
real servers on 127.0.0.1 (the bypasses of issue 9: another port, a redirect to one,
user info in the URL)."""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import requests
from _support.http import serve as server
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, HostNotAllowed
from autofeedback.core._origins import Origin, Origins, canonical_host, origin_of
from autofeedback.integrations._adapter import guard_session
from autofeedback.loop._send import HttpCall, allowed_hosts, send
from autofeedback.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]


def ok(handler: BaseHTTPRequestHandler) -> None:
    body = b'{"books": []}'
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def redirect_to(location: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


# -- the bypasses, against real servers ------------------------------------------------


def test_another_port_of_an_allowed_host_is_refused(bookshop: ApiCatalog) -> None:
    with server(ok) as (spec_url, spec_hits), server(ok) as (other_url, other_hits):
        s = requests.Session()
        guard_session(s, bookshop, base_url=spec_url)
        assert s.get(spec_url + "/books", params={"query": "dune"}).status_code == 200
        with pytest.raises(HostNotAllowed) as info:
            s.get(other_url + "/books", params={"query": "dune"})
        s.close()
    assert spec_hits == ["/books?query=dune"] and other_hits == []
    assert other_url.rsplit(":", 1)[1] in info.value.host


def test_a_redirect_to_another_port_is_not_followed(bookshop: ApiCatalog) -> None:
    with server(ok) as (other_url, other_hits):
        spec = server(redirect_to(other_url + "/steal"))
        with spec as (spec_url, spec_hits), requests.Session() as s:
            guard_session(s, bookshop, base_url=spec_url)
            with pytest.raises(HostNotAllowed):
                s.get(spec_url + "/books", params={"query": "dune"})
    assert spec_hits == ["/books?query=dune"]
    assert other_hits == []  # every hop goes through the adapter; this one was refused


def test_a_redirect_inside_the_origin_is_followed_and_checked(bookshop: ApiCatalog) -> None:
    hits: list[str] = []

    def answer(handler: BaseHTTPRequestHandler) -> None:
        hits.append(handler.path)
        (ok if handler.path.startswith("/books?query=moved") else redirect)(handler)

    with server(answer) as (url, _):
        redirect = redirect_to(url + "/books?query=moved")
        with requests.Session() as s:
            guard_session(s, bookshop, base_url=url)
            response = s.get(url + "/books", params={"query": "dune"})
    assert response.status_code == 200 and len(response.history) == 1
    assert hits == ["/books?query=dune", "/books?query=moved"]


def test_user_info_is_not_part_of_the_host(bookshop: ApiCatalog) -> None:
    with server(ok) as (spec_url, hits):
        port = spec_url.rsplit(":", 1)[1]
        with requests.Session() as s:
            guard_session(s, bookshop, base_url=spec_url)
            # allowed: the origin is the spec server's, whatever the user info says
            s.get(f"http://user:PASSWORD@127.0.0.1:{port}/books", params={"query": "x"})
            with pytest.raises(HostNotAllowed) as info:
                s.get("http://127.0.0.1:8080@127.0.0.2:9/books", params={"query": "x"})
    assert len(hits) == 1
    assert "PASSWORD" not in str(info.value) and "127.0.0.2" in str(info.value)


def test_the_loop_sender_compares_ports_and_never_follows_redirects(bookshop: ApiCatalog) -> None:
    with server(ok) as (other_url, other_hits):  # noqa: SIM117 - the second needs the first's URL
        with server(redirect_to(other_url + "/steal")) as (spec_url, _):
            allowed = allowed_hosts(bookshop, spec_url)
            with pytest.raises(HostNotAllowed):
                send(HttpCall("GET", other_url + "/books", {}), allowed=allowed)
            response = send(HttpCall("GET", spec_url + "/books", {}), allowed=allowed)
    assert response.status_code == 302 and other_hits == []


def test_the_loop_reads_at_most_the_cap_of_a_response() -> None:
    big = b"x" * (3 << 20)

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(big)))
        handler.end_headers()
        handler.wfile.write(big)

    with server(answer) as (url, _):
        allowed = allowed_hosts(ApiCatalog([], servers=[url]), None)
        response = send(HttpCall("GET", url + "/big", {}), allowed=allowed, max_bytes=1 << 20)
    assert len(response.content) == 1 << 20


# -- canonical forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/x", Origin("http", "127.0.0.1", 8080)),
        ("HTTP://API.Example.COM./v1", Origin("http", "api.example.com", 80)),
        ("https://user:pw@api.example.com/", Origin("https", "api.example.com", 443)),
        ("http://[0:0:0:0:0:0:0:1]:8080/", Origin("http", "::1", 8080)),
        ("https://bücher.de/", Origin("https", "xn--bcher-kva.de", 443)),
        ("https://BÜCHER.de./", Origin("https", "xn--bcher-kva.de", 443)),
        ("http://1[27.0.0.1:8080/orders", None),
        ("http://127.0.0.1:99999/", None),
        ("/relative/path", None),
        ("", None),
    ],
)
def test_origin_of(url: str, expected: Origin | None) -> None:
    assert origin_of(url) == expected


def test_allowlist_entries() -> None:
    allowed = Origins.of(
        ["http://127.0.0.1:18080"], extra=["example.org", "api.test:8443", "https://x.test"]
    )
    assert "http://127.0.0.1:18080/a" in allowed
    assert "http://127.0.0.1:18999/a" not in allowed
    assert "https://127.0.0.1:18080/a" not in allowed  # the scheme is part of the origin
    assert "http://example.org:1234/" in allowed  # a bare host name: any port
    assert "https://api.test:8443/" in allowed and "https://api.test/" not in allowed
    assert "https://x.test:443/" in allowed and "http://x.test/" not in allowed
    assert "http://evil.test/?h=example.org" not in allowed


hosts = st.sampled_from(["127.0.0.1", "localhost", "api.example.com", "[::1]", "bücher.de"])


@settings(max_examples=200, deadline=None)
@given(
    host=hosts,
    port=st.one_of(st.none(), st.integers(1, 65535)),
    scheme=st.sampled_from(["http", "https", "HTTP"]),
    # printable ASCII user info: a non-ASCII one whose NFKC form holds '/' or '@' ('℀' is
    # 'a/c') makes urlsplit reject the URL, and such a request is refused (no origin)
    user=st.one_of(
        st.none(),
        st.text(
            st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="/@?#[]:"),
            max_size=8,
        ),
    ),
    upper=st.booleans(),
    dot=st.booleans(),
)
def test_equivalent_forms_are_one_origin(
    host: str, port: int | None, scheme: str, user: str | None, upper: bool, dot: bool
) -> None:
    shown = host.upper() if upper else host
    if dot and not host.startswith("["):
        shown += "."
    base = f"{scheme}://{host}" + (f":{port}" if port else "")
    variant = f"{scheme}://" + (f"{user}:pw@" if user else "") + shown
    variant += f":{port}" if port else ""
    assert origin_of(base) is not None
    assert origin_of(variant + "/path?q=1") == origin_of(base)
    assert Origins.of([base]).allows(variant + "/x")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_origins_never_raise(text: str) -> None:
    allowed = Origins.of(["http://127.0.0.1:8080", text], extra=[text])
    assert isinstance(text in allowed, bool)
    assert canonical_host(text) is None or isinstance(canonical_host(text), str)


def test_user_info_that_normalises_to_a_separator_is_no_origin() -> None:
    # urlsplit rejects '℀' (NFKC 'a/c') in a netloc: such a URL is refused, never guessed
    assert origin_of("http://℀:pw@127.0.0.1/path") is None


def test_localhost_is_not_127_0_0_1_and_the_error_says_so(terse_bookshop: Sandbox) -> None:
    from autofeedback import guard_session

    session = requests.Session()
    guard_session(
        session,
        ApiCatalog.from_file(ROOT / "specs" / "examples" / "bookshop.yaml"),
        base_url=terse_bookshop.url,
    )
    other = terse_bookshop.url.replace("127.0.0.1", "localhost")
    with pytest.raises(HostNotAllowed) as info:
        session.get(other + "/books", params={"query": "x"})
    assert "localhost and 127.0.0.1 are different origins" in str(info.value)
    assert "allow_hosts=" in str(info.value)
