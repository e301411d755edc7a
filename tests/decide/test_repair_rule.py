"""The repair rule, held as properties: a repair may make a call say more exactly what the
model wrote; it never changes what the call does (issue 43).

Names are renamed only where the words are the same words (case, separators, a keyboard
slip inside a word), never to another word, a singular or plural, an opposite, by meaning
alone, or to an operation of stronger effect; nothing that carries a value is dropped;
values are coerced only where the text round-trips exactly; a call is inserted only where
it changes nothing and only for a stand-in. The cases of tests/data/decide/never.json are
the issue's table and more, decided with the real embedding model (the retriever renames
nothing by similarity); the generated ones below cover the pairs the rule names."""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, ApiRequest, Decider, Scanner
from autofeedback.checks._words import (
    _OPPOSITE_PAIRS,
    operation_effect,
    opposite,
    same_words,
    slip,
    stronger,
)
from autofeedback.decide import NOT_COERCIBLE, coerce

DATA = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "decide" / "never.json").read_text("utf-8")
)


def _decide(tools: list[dict[str, Any]], call: dict[str, Any], retriever: Any = None) -> Any:
    catalog = ApiCatalog.from_tools(tools)
    [decision] = Decider(Scanner(catalog, retriever=retriever)).decide(call)
    return decision


@pytest.fixture(scope="module")
def retriever(api_retriever: Any) -> Any:
    """The real embedding model: a rename by similarity would show here."""
    return api_retriever


@pytest.mark.parametrize("case", DATA["never"], ids=lambda c: c["why"])
def test_a_call_is_never_repaired_into_another(case: dict[str, Any], retriever: Any) -> None:
    decision = _decide(case["tools"], case["call"], retriever)
    assert not decision.repairs, [str(r) for r in decision.repairs]
    assert decision.action == "feedback" and decision.request == decision.original
    if "suggestion" in case:  # the model is told what it may have meant
        assert any(f.suggestion == case["suggestion"] for f in decision.findings)


@pytest.mark.parametrize("case", DATA["kept"], ids=lambda c: c["why"])
def test_the_certain_repairs_are_still_made(case: dict[str, Any], retriever: Any) -> None:
    decision = _decide(case["tools"], case["call"], retriever)
    assert decision.action == "forward" and decision.reason == "repaired", decision.remaining


# -- names: another word, a plural, a stronger effect, an opposite ----------------------

READS = ("get", "list", "fetch", "read", "search", "show", "count", "view")
WRITES = ("set", "update", "create", "add", "post", "put", "mount", "send")
DESTROYS = ("delete", "remove", "purge", "reset", "wipe", "clear", "revoke", "drop")
NOUNS = ("user", "config", "event", "volume")


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        (f"{a}_{n}", f"{b}_{n}")
        for a, b in itertools.chain(
            itertools.product(READS, WRITES + DESTROYS), itertools.product(WRITES, DESTROYS)
        )
        for n in NOUNS[:2]
    ],
)
def test_a_name_is_never_renamed_to_a_stronger_operation(
    mine: str, theirs: str, retriever: Any
) -> None:
    for written in (mine, mine.replace("_", ""), "".join(w.title() for w in mine.split("_"))):
        tools = [{"name": theirs, "parameters": {"type": "object"}}]
        decision = _decide(tools, {"name": written, "arguments": {}}, retriever)
        assert [f.code[:2] for f in decision.findings] == ["E2"]  # judged, not unread
        assert not decision.repairs, (written, theirs)


@pytest.mark.parametrize("noun", ["item", "user", "entry", "box", "event"])
def test_a_singular_is_never_renamed_to_its_plural_nor_back(noun: str, retriever: Any) -> None:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + ("es" if noun[-1] == "x" else "s")
    for mine, theirs in ((noun, plural), (plural, noun)):
        for verb in ("get", "delete"):
            tools = [{"name": f"{verb}_{theirs}", "parameters": {"type": "object"}}]
            decision = _decide(tools, {"name": f"{verb}_{mine}", "arguments": {}}, retriever)
            assert decision.findings[0].code.startswith("E2") and not decision.repairs


@pytest.mark.parametrize(("a", "b"), _OPPOSITE_PAIRS)
def test_an_opposite_is_never_renamed_even_with_a_value_only_it_takes(a: str, b: str) -> None:
    # the strongest evidence there is for a parameter rename (a value only one enum holds)
    # does not make an opposite the same parameter
    tool = {
        "name": "query",
        "parameters": {
            "type": "object",
            "properties": {f"{b}_mode": {"type": "string", "enum": ["strictest", "loosest"]}},
        },
    }
    decision = _decide([tool], {"name": "query", "arguments": {f"{a}_mode": "strictest"}})
    assert not decision.repairs and opposite(f"{a}_mode", f"{b}_mode")


def test_a_parameter_is_never_dropped_whatever_it_is_called() -> None:
    tool = {
        "name": "act",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
    for name in ("where", "filter", "dry_run", "tenant_id", "force", "confirm", "limit", "scope"):
        for value in ("x", True, 5, None, {"a": 1}):
            decision = _decide([tool], {"name": "act", "arguments": {"id": "1", name: value}})
            assert not decision.repairs and decision.action == "feedback", (name, value)


def test_a_repaired_api_name_is_one_of_the_same_words_or_a_slip_of_them() -> None:
    # every name one edit from a documented one: renamed only where the rule says so
    documented = ["getEvent", "listEvents", "deleteEvent", "updateCalendar", "search_books"]
    tools = [{"name": n, "parameters": {"type": "object"}} for n in documented]
    catalog = ApiCatalog.from_tools(tools)
    decider = Decider(Scanner(catalog, retriever=None))
    alphabet = "abcdefghijklmnopqrstuvwxyz_"
    renamed = 0
    for name in documented:
        variants = {name[:i] + c + name[i + 1 :] for i in range(len(name)) for c in alphabet}
        variants |= {name[:i] + name[i + 1 :] for i in range(len(name))}
        for written in sorted(variants - set(documented)):
            [decision] = decider.decide({"name": written, "arguments": {}})
            assert decision.findings[0].code.startswith("E2"), written
            renamed += len(decision.repairs)
            for r in decision.repairs:
                target = catalog.get(str(r.after))
                assert target is not None
                assert same_words(written, target.name) or (
                    slip(written, target.name) and not stronger(written, target)
                ), (written, target.name)
    assert renamed > 100  # the slips are still repaired (getEvnt, lstEvents, search_boks)


# -- values: the text round-trips exactly ---------------------------------------------


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=30), st.from_regex(r"-?[0-9０-９]{1,25}(\.[0-9]{1,20})?(e-?[0-9]{1,3})?")
    )
)
def test_a_number_coerced_from_text_says_exactly_what_the_text_said(text: str) -> None:
    as_int = coerce(text, ["integer"])
    if as_int is not NOT_COERCIBLE:
        assert str(as_int) == text
    as_number = coerce(text, ["number"])
    if as_number is not NOT_COERCIBLE:
        assert text.isascii() and text.strip() == text
        assert math.isfinite(as_number) and Decimal(repr(as_number)) == Decimal(text)


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_json_text_is_decoded_only_to_the_value_it_encodes(value: Any) -> None:
    text = json.dumps(value)
    for kind in ("object", "array"):
        out = coerce(text, [kind])
        if out is not NOT_COERCIBLE:
            assert out == value


def test_json_text_that_says_two_things_is_left() -> None:
    for text in ('{"a": 1, "a": 2}', '{"a": NaN}', '{"a": Infinity}', "[1e400]", '{"a": 1e-400}'):
        assert coerce(text, ["object", "array"]) is NOT_COERCIBLE, text


# -- effects -------------------------------------------------------------------------


def test_the_effect_of_an_operation_is_the_strongest_its_spec_says() -> None:
    catalog = ApiCatalog.from_tools(
        [
            {"name": "get_thing", "parameters": {"type": "object"}},
            {
                "name": "thing",
                "parameters": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            },
            {
                "name": "tidy",
                "parameters": {"type": "object"},
                "annotations": {"destructiveHint": True},
            },
        ]
    )
    effects = {op.name: operation_effect(op) for op in catalog.operations}
    assert effects == {"get_thing": 0, "thing": 0, "tidy": 2}
    assert stronger("get_thing", catalog.get("tidy"))  # type: ignore[arg-type]


def test_a_request_keeps_every_value_it_was_given() -> None:
    # a whole call through the decision: a slip renamed, a number coerced, the rest kept
    tool = {
        "name": "list_events",
        "parameters": {
            "type": "object",
            "required": ["calendarId"],
            "properties": {
                "calendarId": {"type": "string"},
                "limit": {"type": "integer"},
                "days": {"type": "integer"},
            },
        },
    }
    request = ApiRequest(
        name="list_events", arguments={"calendarId": "c", "limt": 5, "days": "3", "scope": "me"}
    )
    [decision] = Decider(Scanner(ApiCatalog.from_tools([tool]), retriever=None)).decide(request)
    assert decision.request.arguments == {"calendarId": "c", "limit": 5, "days": 3, "scope": "me"}
    assert decision.action == "feedback"  # scope is the model's to keep or take back


def test_nothing_is_repaired_against_an_operation_only_partly_read() -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/books": {
                "get": {
                    "operationId": "searchBooks",
                    "parameters": [
                        {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                        {"$ref": "#/components/parameters/Nowhere"},
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    with pytest.warns(Warning, match="Nowhere"):
        catalog = ApiCatalog.from_obj(spec)
    assert catalog.get("searchBooks").unread  # type: ignore[union-attr]
    decider = Decider(Scanner(catalog, retriever=None))
    for call in ({"Limit": 5}, {"limt": 5}):
        [decision] = decider.decide({"name": "searchBooks", "arguments": call})
        assert decision.action == "feedback" and not decision.repairs, call
    [renamed] = decider.decide({"name": "search_books", "arguments": {"limit": 5}})
    assert not renamed.repairs


def test_the_model_s_own_request_is_never_changed_by_its_repair() -> None:
    tool = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"quantity": {"type": "integer"}},
                                }
                            }
                        }
                    },
                    "responses": {"201": {"description": "made"}},
                }
            }
        },
    }
    body = {"Quantity": 2}
    request = ApiRequest(method="POST", url="/orders", body=body, format="request")
    [decision] = Decider(Scanner(ApiCatalog.from_obj(tool), retriever=None)).decide(request)
    assert decision.request.body == {"quantity": 2}
    assert body == {"Quantity": 2} and decision.original.body == {"Quantity": 2}


def test_an_http_path_is_respelt_below_the_server_s_base_path() -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:8090/api"}],
        "paths": {
            "/calendars/{calendarId}/events": {
                "get": {
                    "operationId": "listEvents",
                    "parameters": [
                        {
                            "name": "calendarId",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    decider = Decider(Scanner(ApiCatalog.from_obj(spec), retriever=None))
    url = "http://127.0.0.1:8090/api/Calendars/c1/Events?x=1"
    [decision] = decider.decide(ApiRequest(method="GET", url=url, format="request"))
    assert decision.request.url == "http://127.0.0.1:8090/api/calendars/c1/events?x=1"


def test_an_http_path_with_a_keyboard_slip_is_respelt_for_the_same_method_only() -> None:
    def op(method: str, path: str, op_id: str) -> dict[str, Any]:
        return {path: {method: {"operationId": op_id, "responses": {"200": {"description": "ok"}}}}}

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:8090/api"}],
        "paths": {**op("get", "/events", "listEvents"), **op("delete", "/calendars", "wipe")},
    }
    decider = Decider(Scanner(ApiCatalog.from_obj(spec), retriever=None))
    base = "http://127.0.0.1:8090/api"
    [fixed] = decider.decide(ApiRequest(method="GET", url=base + "/evnets", format="request"))
    assert fixed.request.url == base + "/events" and fixed.findings[0].fix is not None
    for method, path in (("POST", "/evnets"), ("GET", "/calendar"), ("DELETE", "/calendras")):
        [left] = decider.decide(ApiRequest(method=method, url=base + path, format="request"))
        assert not left.repairs, (method, path)


@pytest.mark.parametrize(
    ("value", "items", "expected"),
    [
        # one value sent for an array of its own type: wrapped, as it is
        (True, ["boolean"], [True]),
        (2.5, ["number"], [2.5]),
        (7, ["integer"], [7]),
        (None, ["null"], [None]),
        ("a", ["string"], ["a"]),
        # a value of another type is not one item of this array
        (True, ["integer"], NOT_COERCIBLE),
        (True, ["number"], NOT_COERCIBLE),
        (5, ["string"], NOT_COERCIBLE),
        (None, ["string"], NOT_COERCIBLE),
        (2.5, ["integer"], NOT_COERCIBLE),
        # text of an item's type converts as a lone value would, then is wrapped
        ("3", ["integer"], [3]),
        ("a,b", ["string"], NOT_COERCIBLE),  # one item or two: not certain
    ],
)
def test_a_lone_value_for_an_array_is_wrapped_only_as_its_own_type(
    value: Any, items: list[str], expected: Any
) -> None:
    """Found by mutation testing (mutants of ``_coerce._fits`` survived): which values
    are already an item of the documented array was never asserted."""
    got = coerce(value, ["array"], items=items)
    if expected is NOT_COERCIBLE:
        assert got is NOT_COERCIBLE
    else:
        assert got == expected and [type(v) for v in got] == [type(v) for v in expected]
