"""What an unknown parameter name is read as (autofeedback.checks._check_params._unknown),
every field of the finding: a semantic variant (E3.3) against another API's name (E3.1),
the variant of a parameter the call already sends, and the names past those searched.
Cases the checks/ mutation pass (issue 39, benchmarks/RESULTS.md) found no test deciding.

Similarities are the packaged all-MiniLM-L6-v2's: ``user`` ~ ``login`` 0.54 (over the
threshold of 0.5, under the 0.6 asked of another API's name), ``login`` ~ ``password``
0.67, ``session`` 0.52, ``username`` 0.33, ``email`` ~ ``email_address`` 0.86, ``mail``
0.85."""

from __future__ import annotations

from typing import Any

from autofeedback import ApiCatalog, Scanner

Row = tuple[str, tuple[str, ...], Any, Any, Any, Any, str]


def _tool(name: str, *params: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    properties = {p: {"type": "string"} for p in params}
    parameters = {"type": "object", "properties": properties, "required": list(required)}
    return {"name": name, "description": "d", "parameters": parameters}


def _rows(scanner: Scanner, name: str, **arguments: Any) -> list[Row]:
    found = scanner.iter_findings({"name": name, "arguments": arguments})
    return [
        (f.code, f.location, f.got, f.expected, f.suggestion, f.operation, f.message) for f in found
    ]


SESSION = _tool("createSession", "login", "password", required=("login", "password"))
MISSING_LOGIN: Row = (
    "E3.4",
    ("argument", "login"),
    None,
    "login",
    "login",
    "createSession",
    "required parameter 'login' is missing",
)


def test_a_semantic_variant_over_the_threshold_is_e3_3(api_retriever: Any) -> None:
    scanner = Scanner(ApiCatalog.from_tools([SESSION]), retriever=api_retriever)
    assert _rows(scanner, "createSession", password="p", user="u") == [
        (
            "E3.3",
            ("argument", "user"),
            "user",
            "login",
            "login",
            "createSession",
            "unknown parameter 'user'; the closest documented one is 'login' (similarity 0.54)",
        ),
        MISSING_LOGIN,
    ]


def test_another_apis_name_must_be_a_clearer_variant(api_retriever: Any) -> None:
    """``user`` is getProfile's parameter: 0.54 is not clear enough to outweigh that, so
    it is E3.1, still pointing at the missing ``login``."""
    catalog = ApiCatalog.from_tools([SESSION, _tool("getProfile", "user")])
    scanner = Scanner(catalog, retriever=api_retriever)
    assert _rows(scanner, "createSession", password="p", user="u") == [
        (
            "E3.1",
            ("argument", "user"),
            "user",
            ["login", "password"],
            "login",
            "createSession",
            "parameter 'user' belongs to getProfile, not to createSession; did you mean 'login'?",
        ),
        MISSING_LOGIN,
    ]


LOG_IN = _tool("logIn", "username", "password", "session", required=("username", "password"))
MISSING_USERNAME: Row = (
    "E3.4",
    ("argument", "username"),
    None,
    "username",
    "username",
    "logIn",
    "required parameter 'username' is missing",
)


def test_the_variant_of_a_sent_parameter_means_the_one_missing(api_retriever: Any) -> None:
    """``login`` is closest to ``password``, which is sent: one unknown name and one
    required parameter missing, it is that one (``username``), not the optional
    ``session`` it is closer to."""
    scanner = Scanner(ApiCatalog.from_tools([LOG_IN]), retriever=api_retriever)
    assert _rows(scanner, "logIn", password="p", login="u") == [
        (
            "E3.3",
            ("argument", "login"),
            "login",
            "username",
            "username",
            "logIn",
            "unknown parameter 'login'; the closest documented one is 'username' (similarity 0.33)",
        ),
        MISSING_USERNAME,
    ]


def test_the_variant_of_a_sent_parameter_is_the_closest_not_sent(api_retriever: Any) -> None:
    """Two unknown names: no missing parameter is the one meant, so ``login`` is read as
    the closest documented name not sent yet."""
    scanner = Scanner(ApiCatalog.from_tools([LOG_IN]), retriever=api_retriever)
    assert _rows(scanner, "logIn", password="p", login="u", foo="z") == [
        (
            "E3.3",
            ("argument", "login"),
            "login",
            "session",
            "session",
            "logIn",
            "unknown parameter 'login'; the closest documented one is 'session' (similarity 0.52)",
        ),
        (
            "E3",
            ("argument", "foo"),
            "foo",
            ["username", "password", "session"],
            None,
            "logIn",
            "unknown parameter 'foo'; logIn takes: username, password, session",
        ),
        MISSING_USERNAME,
    ]


def test_another_apis_name_close_to_one_not_sent_is_its_variant(api_retriever: Any) -> None:
    """``email`` (sendMail's) is closest to the sent ``email_address``; the next, ``mail``
    (0.85), is clear enough for a name another API takes."""
    subscribe = _tool("subscribe", "email_address", "mail", required=("email_address",))
    catalog = ApiCatalog.from_tools([subscribe, _tool("sendMail", "email")])
    scanner = Scanner(catalog, retriever=api_retriever)
    assert _rows(scanner, "subscribe", email_address="a", email="b") == [
        (
            "E3.3",
            ("argument", "email"),
            "email",
            "mail",
            "mail",
            "subscribe",
            "unknown parameter 'email'; the closest documented one is 'mail' (similarity 0.85)",
        )
    ]


def test_names_past_those_searched_get_no_suggestion() -> None:
    """The first 32 unknown names of a call are searched for the closest documented one;
    ``limt`` as the 32nd is told ``limit``, as the 33rd it is not."""
    scanner = Scanner(ApiCatalog.from_tools([_tool("f", "limit", "q")]), retriever=None)
    junk = {f"u{i}": "1" for i in range(31)}
    rows = _rows(scanner, "f", **junk, limt="5")
    assert len(rows) == 32
    assert rows[-1] == (
        "E3",
        ("argument", "limt"),
        "limt",
        ["limit", "q"],
        "limit",
        "f",
        "unknown parameter 'limt'; did you mean 'limit'? f takes: limit, q",
    )
    rows = _rows(scanner, "f", **junk, u31="1", limt="5")
    assert len(rows) == 33
    assert rows[-1] == (
        "E3",
        ("argument", "limt"),
        "limt",
        ["limit", "q"],
        None,
        "f",
        "unknown parameter 'limt'; f takes: limit, q",
    )


def test_names_past_those_searched_are_not_compared_by_meaning(api_retriever: Any) -> None:
    scanner = Scanner(ApiCatalog.from_tools([SESSION]), retriever=api_retriever)
    junk = {f"u{i}": "1" for i in range(32)}
    rows = _rows(scanner, "createSession", password="p", **junk, user="u")
    assert rows[-2:] == [
        (
            "E3",
            ("argument", "user"),
            "user",
            ["login", "password"],
            None,
            "createSession",
            "unknown parameter 'user'; createSession takes: login, password",
        ),
        MISSING_LOGIN,
    ]
