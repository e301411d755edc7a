"""Requests written as JavaScript (``fetch``, axios) or as ``wget`` commands, the way
agents that write code or shell commands send them. Before, ``fetch("https://...")``
was "a Python call with a positional argument" (E1), an axios call "an HTTP client call
with only the URL positional", and a wget command "no API request found"; a command in
an inline code span (``Run `curl https://x.io/a` to see it``) took the backtick into its
URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, Scanner
from autofeedback._parse import parse_output

BOOKSHOP = Path(__file__).parents[2] / "specs" / "examples" / "bookshop.yaml"
HOST = "http://127.0.0.1:8080"


def read(text: str) -> list[tuple[Any, ...]]:
    result = parse_output(text)
    assert result.problem is None, result.problem
    return [(r.method, r.url, r.params, r.body, dict(r.headers)) for r in result.requests]


def problem(text: str) -> str | None:
    result = parse_output(text)
    assert result.requests == ()
    return result.problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('fetch("https://api.example.com/books?limit=5")',
         ("GET", "https://api.example.com/books?limit=5", {}, None, {})),
        # options, a JSON.stringify body, trailing commas, a header computed at run time left out
        ('const res = await fetch("https://a.io/books", {method: "POST", headers: '
         '{"Content-Type": "application/json", Authorization: `Bearer ${token}`}, '
         'body: JSON.stringify({title: "Dune", year: 1965, tags: ["sf"],}),});',
         ("POST", "https://a.io/books", {}, {"title": "Dune", "year": 1965, "tags": ["sf"]},
          {"Content-Type": "application/json"})),
        # a body of JSON text, single quotes, and the chained calls of the statement
        ("fetch('https://a.io/books/7', { method: 'PUT', body: '{\"qty\": 2}' })"
         ".then(r => r.json()).catch(e => console.error(e))",
         ("PUT", "https://a.io/books/7", {}, {"qty": 2}, {})),
        # a template literal without ${}, comments, a Headers object, an escaped quote
        ('// look it up\nwindow.fetch(`https://a.io/search?q=it\\\'s`, /* opts */ '
         '{headers: new Headers({"Accept": "application/json"})})',
         ("GET", "https://a.io/search?q=it's", {}, None, {"Accept": "application/json"})),
        # a form: the text and the header the browser sends with it
        ('fetch("https://a.io/login", {method: "POST", '
         'body: new URLSearchParams({user: "bo", n: 2})})',
         ("POST", "https://a.io/login", {}, "user=bo&n=2",
          {"Content-Type": "application/x-www-form-urlencoded;charset=UTF-8"})),
        ('const r = await axios.get("https://a.io/books", {params: {limit: 5, q: "dune"}});',
         ("GET", "https://a.io/books", {"limit": 5, "q": "dune"}, None, {})),
        ('axios.post("https://a.io/books", {title: "Dune", price: 9.5, used: false}, '
         '{headers: {"X-Key": "abc"}})',
         ("POST", "https://a.io/books", {}, {"title": "Dune", "price": 9.5, "used": False},
          {"X-Key": "abc"})),
        ('axios({method: "delete", url: "/books/7", baseURL: "https://a.io/v1/"})',
         ("DELETE", "https://a.io/v1/books/7", {}, None, {})),
        ('axios.request({url: "https://a.io/x", method: "patch", data: {a: null}})',
         ("PATCH", "https://a.io/x", {}, {"a": None}, {})),
        ('axios("https://a.io/x")', ("GET", "https://a.io/x", {}, None, {})),
    ],
)  # fmt: skip
def test_javascript_calls_are_read_from_their_literals(
    text: str, expected: tuple[Any, ...]
) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fetch(`https://a.io/books/${id}`)",
         "looks like a JavaScript fetch() call but its URL is made when the code runs "
         "(a variable or a template)"),
        ("fetch(url)", "looks like a JavaScript fetch() call but its URL is made when the "
         "code runs (a variable or a template)"),
        ('fetch("https://a.io/x", {method: "POST", body: payload})',
         "looks like a JavaScript fetch() call but its body is made when the code runs "
         "('payload')"),
        ('fetch("https://a.io/x", {body: "q=1"})',
         "looks like a JavaScript fetch() call but a GET or HEAD request cannot have a body "
         "(fetch throws a TypeError)"),
        ('fetch("https://a.io/x", {method: "POST", body: {a: 1}})',
         "looks like a JavaScript fetch() call but its body is an object: fetch sends it as "
         "'[object Object]'"),
        ('axios.get("https://a.io/x", {params: {limit}})',
         "looks like a JavaScript axios.get() call but a value of its params is made when the "
         "code runs ('limit')"),
        ('fetch("https://a.io/x", opts)',
         "looks like a JavaScript fetch() call but its options are made when the code runs"),
    ],
)  # fmt: skip
def test_what_the_code_makes_at_run_time_is_said_not_guessed(text: str, expected: str) -> None:
    assert problem(text) == expected


def test_what_is_not_javascript_is_left_to_the_other_readers() -> None:
    # a tool named fetch, called in Python form
    result = parse_output('fetch(url="https://example.com", max_length=500)')
    assert [(r.name, r.arguments) for r in result.requests] == [
        ("fetch", {"url": "https://example.com", "max_length": 500})
    ]
    assert problem("I will fetch (the data) and then axios, no.") == (
        "no API request found in the output"
    )
    assert parse_output("client.fetch('https://a.io/x')").requests == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('wget -qO- "https://a.io/books?limit=5"',
         ("GET", "https://a.io/books?limit=5", {}, None, {})),
        ("wget -O- a.io/books", ("GET", "http://a.io/books", {}, None, {})),
        ("wget --method=POST --header='Content-Type: application/json' "
         "--body-data='{\"title\": \"Dune\"}' https://a.io/books",
         ("POST", "https://a.io/books", {}, {"title": "Dune"},
          {"Content-Type": "application/json"})),
        ("wget -q -O out.json --post-data 'q=dune&limit=5' https://a.io/search",
         ("POST", "https://a.io/search", {}, "q=dune&limit=5",
          {"Content-Type": "application/x-www-form-urlencoded"})),
        ("wget --user=bob --password hunter22 https://a.io/me",
         ("GET", "https://a.io/me", {}, None, {"Authorization": "Basic Ym9iOmh1bnRlcjIy"})),
        ("wget --method DELETE \\\n  https://a.io/books/7",
         ("DELETE", "https://a.io/books/7", {}, None, {})),
    ],
)  # fmt: skip
def test_wget_commands(text: str, expected: tuple[Any, ...]) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wget https://a.io/x https://a.io/y",
         "looks like a wget command but it fetches more than one URL; write one command a request"),
        ("wget -q", "looks like a wget command but there is no URL"),
        ("wget --body-data 'x' https://a.io/x",
         "looks like a wget command but --body-data is sent only with --method"),
        ("wget --post-file=order.json https://a.io/x",
         "looks like a wget command but its body is read from a file (--post-file), which is "
         "not read here"),
        ("You can use wget to download files.", "no API request found in the output"),
    ],
)  # fmt: skip
def test_wget_problems(text: str, expected: str) -> None:
    assert problem(text) == expected


@pytest.mark.parametrize("command", ["curl", "http GET", "wget -qO-"])
def test_a_command_in_an_inline_code_span_ends_with_it(command: str) -> None:
    text = f"Run `{command} https://a.io/books/7` to see it, then ask again."
    assert [(r.method, r.url) for r in parse_output(text).requests] == [
        ("GET", "https://a.io/books/7")
    ]


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(ApiCatalog.from_file(BOOKSHOP), retriever=None)


def codes(scanner: Scanner, output: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.code, f.location) for f in scanner.iter_findings(output)]


def test_each_form_is_checked_against_the_spec(scanner: Scanner) -> None:
    assert codes(scanner, f'await fetch("{HOST}/books?query=dune&limit=ten")') == [
        ("E4.1", ("query", "limit"))
    ]
    assert codes(scanner, f'axios.get("{HOST}/books", {{params: {{query: "dune", limt: 5}}}})') == [
        ("E3", ("query", "limt"))
    ]
    order = "{book_id: 7, quantity: 20}"
    init = f'{{method: "POST", headers: {{"Content-Type": "application/json"}}, body: {order}}}'
    fetch = f'fetch("{HOST}/orders", {init.replace(order, f"JSON.stringify({order})")})'
    assert codes(scanner, fetch) == [("E4.2", ("body", "quantity"))]
    assert codes(scanner, f"axios.post('{HOST}/orders', {{book_id: 7, quantity: 2}})") == []
    assert codes(scanner, f"wget -qO- '{HOST}/books?query=dune&sort=oldest'") == [
        ("E4.2", ("query", "sort"))
    ]
