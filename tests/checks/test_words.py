"""What a name says (autofeedback.checks._words), case by case: keyboard slips, plurals,
the effect a name or a spec says. The repair rule's properties are in
tests/decide/test_repair_rule.py; these are the cases a mutation pass (issue 39,
benchmarks/RESULTS.md) found no test deciding."""

from __future__ import annotations

import pytest

from autofeedback.checks._words import (
    name_effect,
    no_side_effects,
    operation_effect,
    plural_pair,
    slip,
    stronger,
)
from autofeedback.core._model import Operation


@pytest.mark.parametrize(
    ("a", "b", "pair"),
    [
        ("box", "boxes", True),  # -es
        ("entry", "entries", True),
        ("copy", "copyright", False),  # a word that ends in y and goes on is no plural
    ],
)
def test_plural_pairs(a: str, b: str, pair: bool) -> None:
    assert plural_pair(a, b) is pair


@pytest.mark.parametrize(
    ("written", "documented", "is_slip"),
    [
        ("getEvént", "getEvent", False),  # a letter that is not ASCII is no slip of the keyboard
        ("rvent_list", "event_list", True),  # the first letter of the first word
        ("get_rvent", "get_event", True),  # the first letter of a later word
        ("event_list_evnt", "event_list_event", True),  # a word the name says twice
        ("eventz_list", "events_list", True),
        ("usenrame", "user_name", False),  # two letters swapped across words: not in one word
        ("laye2r", "layer_2", False),  # across a word and its number
        ("userrid", "user_id", False),  # read as the start of `id`, a word too short for a slip
        ("get_usr", "get_user", True),  # a word of exactly four letters takes a slip
        ("count_volume", "mount_volume", False),  # `count` is a word: no slip of `mount`
        # words written without separators
        ("geruser", "getuser", True),
        ("getuserr", "getuser", True),
        ("getout", "getput", False),  # `put` would become `out`, another common word
        ("listiemconfig", "list_itemconfig", True),
    ],
)
def test_a_keyboard_slip_inside_one_word(written: str, documented: str, is_slip: bool) -> None:
    assert slip(written, documented) is is_slip


@pytest.mark.parametrize(
    ("name", "effect"),
    [
        ("cancelorder", 2),  # the longest verb it starts with: cancel, not can
        ("getconfig", 0),
        ("api_key_status", None),  # the verb leads: a third word is no verb of the name
        # a version or a number before the verb is no word of the name
        ("v2_get_user", 0),
        ("api_v1_delete_user", 2),
        ("s3_put_object", 1),
        ("oauth2_get_token", 0),
        ("v2", None),
    ],
)
def test_the_effect_a_name_says(name: str, effect: int | None) -> None:
    assert name_effect(name) == effect


@pytest.mark.parametrize(
    ("operation", "effect"),
    [
        (Operation("x", read_only=True, destructive=False), 0),
        (Operation("x", method="head", path="/x"), 0),
        (Operation("x", method="OPTIONS", path="/x"), 0),
        (Operation("x", method="POST", path="/x"), 1),
        (Operation("x", read_only=False), 1),
    ],
)
def test_the_effect_a_spec_says(operation: Operation, effect: int) -> None:
    assert operation_effect(operation) == effect


@pytest.mark.parametrize(
    ("operation", "safe"),
    [
        (Operation("x", method="HEAD", path="/x"), True),
        (Operation("x", method="GET", path="/x", destructive=False), True),
        (Operation("GET_me_player"), True),  # its method from its name: GET
        (Operation("GET_me", method="OPTIONS", path="/me"), False),  # the method it has wins
        (Operation("listUsers"), False),  # a name alone promises nothing
    ],
)
def test_what_changes_nothing(operation: Operation, safe: bool) -> None:
    assert no_side_effects(operation) is safe


@pytest.mark.parametrize(
    ("written", "target", "more"),
    [
        ("crate_ticket", "create_ticket", True),  # `crate` is a word: no slip of `create`
        ("creat_tickets", "create_ticket", True),  # the rest of the name differs
        ("creat_a_ticket", "create_ticket", True),  # ...by a one-letter word, no version
        ("日本", "create", True),  # a name with no words says at most a read
        ("v2_get_user", "v2_set_user", True),  # a version before the verb hides nothing
        ("v2_delet_user", "v2_delete_user", True),
        ("v2_creat_ticket", "v2_create_ticket", False),  # a slip in the verb of a write
        ("creat_ticket_v2", "create_ticket", False),  # ...the version last, read past
    ],
)
def test_a_call_that_would_do_more(written: str, target: str, more: bool) -> None:
    assert stronger(written, Operation(target)) is more
