"""Programs are read with ast, never run: references, comprehensions, joins, f-strings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autofeedback.flow._program import Derived, Ref, Unbound, parse_program


def test_reference_chain_becomes_a_path_into_the_producer() -> None:
    calls, problems = parse_program(
        'r = GET_tv_popular()\nr1 = GET_tv__tv_id_(tv_id=r.results[0].id)\nF(x=r1["name"])'
    )
    assert problems == []
    assert [c.variable for c in calls] == ["r", "r1", None]
    ref = calls[1].arguments["tv_id"]
    assert ref == Ref("r", 0, ("results", "[]", "id"), text="r.results[0].id")
    assert calls[2].arguments["x"].path == ("name",)
    assert calls[2].arguments["x"].step == 1


def test_comprehension_join_and_fstring_are_followed() -> None:
    calls, _ = parse_program(
        "r = S(q='x')\n"
        'P(ids=",".join([i.uri for i in r.tracks.items[:3]]), '
        "u=[t.id for t in r.tracks.items], n=f'{r.total} items', k=[i.id for i in r.a][0])"
    )
    args = calls[1].arguments
    assert isinstance(args["ids"], Derived) and args["ids"].kind == "string"
    assert args["ids"].parts[0].path == ("tracks", "items", "[]", "uri")
    assert args["u"].many and args["u"].path == ("tracks", "items", "[]", "id")
    assert args["n"].parts[0].path == ("total",)
    assert not args["k"].many  # the first item of a comprehension is one value


def test_unassigned_names_and_literals() -> None:
    calls, _ = parse_program('G(id=r.results[0].id, q="Dune", n=3, ok=True, tags=["a"])')
    args = calls[0].arguments
    assert args["id"] == Unbound("r", "r.results[0].id")
    assert (args["q"], args["n"], args["ok"], args["tags"]) == ("Dune", 3, True, ["a"])


def test_comprehension_variable_does_not_leak() -> None:
    calls, _ = parse_program("r = S()\nA(x=[i.id for i in r.items])\nB(y=i.id)")
    assert isinstance(calls[2].arguments["y"], Unbound)


def test_nothing_is_executed_and_bad_lines_are_e1() -> None:
    calls, problems = parse_program(
        'import os\nx = 1\nF(a=__import__("os").system("x"))\ndef g():\n    pass\nr.a = 1'
    )
    assert [c.name for c in calls] == ["F"]
    # import, a call inside F's argument, def, attribute store
    assert [p.code for p in problems] == ["E1", "E1", "E1", "E1"]
    assert [p.location for p in problems] == [
        ("line[1]",), ("line[3]",), ("line[4]",), ("line[6]",)
    ]  # fmt: skip
    _, broken = parse_program("F(a=1))")
    assert broken[0].code == "E1" and "cannot be parsed" in broken[0].message


def test_deeply_nested_expression_is_not_a_crash() -> None:
    _, problems = parse_program("F(a=" + "[" * 5000 + "]" * 5000 + ")")
    assert problems and problems[0].code == "E1"


def test_every_graphqlrestbench_gold_program_reads(shared_data_dir: Path) -> None:
    rows = [
        json.loads(line)
        for name in ("train", "valid", "test")
        for line in (shared_data_dir / "graphqlrestbench" / f"{name}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    assert len(rows) == 155
    unreadable = [r["output"] for r in rows if parse_program(r["output"])[1]]
    # the two gold programs with a syntax error (a stray ")" and an "if" without "else")
    assert len(unreadable) == 2
    calls = sum(len(parse_program(r["output"])[0]) for r in rows)
    assert calls > 300


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_empty_program_has_no_calls(text: str) -> None:
    assert parse_program(text) == ([], [])


def test_intermediate_values_stand_for_what_they_hold() -> None:
    calls, problems = parse_program(
        "r = GET_search_movie(query='Dune')\n"
        "movie_id = r.results[0].id\n"
        "first = r.results[0]\n"
        "q = 'en-US'\n"
        "GET_movie(movie_id=movie_id, language=q, title=first.title, n=made_up)\n"
    )
    assert problems == []
    args = calls[1].arguments
    # the feedback can name the read as written: r.results[0].id, on the line before
    assert args["movie_id"] == Ref("r", 0, ("results", "[]", "id"), text="r.results[0].id")
    assert args["title"].path == ("results", "[]", "title")
    assert args["language"] == "en-US"  # a literal stays a literal, so its type is checked
    assert args["n"] == Unbound("made_up", "made_up")


def test_loops_branches_and_output_contribute_their_calls() -> None:
    calls, problems = parse_program(
        "r = GET_album_tracks(id='x')\n"
        "ids = []\n"
        "for t in r.items[:3]:\n"
        "    d = GET_track(id=t.id)\n"
        "    ids.append(t.id)\n"
        "    print(d.name)\n"
        "if r.total > 3:\n"
        "    GET_next(offset=3)\n"
        "else:\n"
        "    print('done')\n"
        "PUT_save(ids=','.join(ids))\n"
        "n = GET_me().country\n"
        "GET_browse(country=n, count=len(r.items))\n"
        "out = []\n"
        "out.append(GET_artist(id=r.items[0].artists[0].id))\n"
    )
    assert problems == []
    assert [c.name for c in calls] == [
        "GET_album_tracks", "GET_track", "GET_next", "PUT_save", "GET_me", "GET_browse",
        "GET_artist",
    ]  # fmt: skip
    assert calls[1].arguments["id"].path == ("items", "[]", "id")
    assert calls[3].arguments["ids"].parts[0].path == ("items", "[]", "id")
    assert calls[3].arguments["ids"].parts[0].many
    country = calls[5].arguments["country"]
    assert (country.step, country.path) == (4, ("country",))  # GET_me's result, read at once
    assert calls[6].arguments["id"].path == ("items", "[]", "artists", "[]", "id")


def test_rebinding_a_name_forgets_what_it_held() -> None:
    calls, _ = parse_program("r = A()\nr = 'x'\nB(v=r)\nr = C()\nD(v=r.id)")
    assert calls[1].arguments["v"] == "x"
    assert calls[3].arguments["v"].step == 2


def test_deep_nesting_of_blocks_is_an_e1_not_a_crash() -> None:
    text = "".join("    " * i + "if x:\n" for i in range(40)) + "    " * 40 + "F(a=1)\n"
    calls, problems = parse_program(text)
    assert calls == [] and problems and problems[0].code == "E1"


def test_dotted_parameter_names() -> None:
    calls, problems = parse_program('GET_discover_movie(**{"vote_average.gte": 7}, page=1)')
    assert problems == [] and calls[0].arguments == {"vote_average.gte": 7, "page": 1}
    _, broken = parse_program("GET_discover_movie(vote_average.gte=7, page=1)")
    assert "passed as **{'vote_average.gte': value}" in broken[0].message


def test_a_value_shown_alone_is_not_a_call_and_not_an_error() -> None:
    calls, problems = parse_program("r = GET_images(id=1)\nr.logos[0].id")
    assert [c.name for c in calls] == ["GET_images"] and problems == []
    _, problems = parse_program("r = GET_images(id=1)\nr.logos[0].id + os.system('x')")
    assert [p.code for p in problems] == ["E1"]  # a call inside is not a shown value


@pytest.mark.parametrize(
    ("text", "line", "got"),
    [
        ("r = A(q=1)\nx = 1 + B(id=r.id)", 2, "B(id=r.id)"),
        ("r = A(q=1)\nx = [B(id=t.id) for t in r.items]", 2, "B(id=t.id)"),
        ("r = A(q=1)\nfor t in B(id=r.id).items:\n    C(id=t.id)", 2, "B(id=r.id)"),
        ("r = A(q=1)\nif B(id=r.id):\n    C(id=1)", 2, "B(id=r.id)"),
        ("r = A(q=1)\nC(id=B(id=r.id).id)", 2, "B(id=r.id)"),
        ("r = A(q=1)\nx, y = r.id, B(id=1)", 2, "B(id=1)"),
        ("r = A(q=1)\nb = get - book(book_id=r.id)", 2, "book(book_id=r.id)"),
    ],
    ids=["arithmetic", "comprehension", "loop", "branch", "argument", "tuple", "subtraction"],
)
def test_a_call_inside_an_expression_is_an_e1_not_a_pass(text: str, line: int, got: str) -> None:
    # no step reads it, so nothing checks it and no runner makes it (it was passed over)
    calls, problems = parse_program(text)
    assert [c.name for c in calls][:1] == ["A"]
    assert [(p.code, p.location, p.got) for p in problems] == [("E1", (f"line[{line}]",), got)]
    assert problems[0].message.startswith("a call inside an expression is not read as a step")


def test_what_a_program_computes_from_values_is_no_unread_call() -> None:
    calls, problems = parse_program(
        "r = A(q=1)\n"
        "n = len(r.items) + 1\n"
        "d = [p.id for p in r.crew if p.job.lower() == 'director'][0]\n"
        "s = ', '.join(str(i) for i in r.ids)\n"
        "B(id=d, n=n, s=s, title=r.title.strip())\n"
        "for i, t in zip(range(2), r.items):\n"
        "    C(id=t.id)\n"
    )
    assert [c.name for c in calls] == ["A", "B", "C"] and problems == []


def test_a_program_with_a_call_inside_an_expression_is_not_passed_as_clean() -> None:
    from autofeedback import ApiCatalog, Scanner

    catalog = ApiCatalog.from_tools(
        [
            {
                "name": "foo",
                "parameters": {"type": "object", "properties": {"b": {"type": "integer"}}},
            }
        ]
    )
    scanner = Scanner(catalog, retriever=None)
    found = list(scanner.iter_findings("a = foo(b=1)\nx = 1 + fooo(b=a.id)"))
    assert [(f.code, f.location, f.got) for f in found] == [("E1", ("line[2]",), "fooo(b=a.id)")]


def test_a_tool_named_with_hyphens_is_called_in_a_program() -> None:
    # get-book(...) reads in Python as get - book(...); written with no space around the
    # hyphens it is the call of the tool get-book (MCP servers name tools so)
    calls, problems = parse_program(
        "r = search-books(q='Dune')\nb = get-book-by-id(book_id=r.items[0].id)\nprint(b.title)"
    )
    assert problems == []
    assert [(c.name, c.text) for c in calls] == [
        ("search-books", "search-books(q='Dune')"),
        ("get-book-by-id", "get-book-by-id(book_id=r.items[0].id)"),
    ]
    assert calls[1].arguments["book_id"].path == ("items", "[]", "id")
    assert calls[1].spans is not None and calls[1].spans.func == (31, 45)  # where it is written
