"""Feedback on a wrong API name that leaves the model nothing to guess (issue 40): every
documented name is listed (up to 40, then a count), and where the name is one API's in
other words the call's arguments are judged against that API in the same round."""

from __future__ import annotations

from pathlib import Path

from autofeedback import ApiCatalog, Decider, Scanner, render_feedback

SPEC = Path(__file__).resolve().parents[1] / "data" / "specs" / "calendar.yaml"
CALENDAR = ApiCatalog.from_file(SPEC)


def test_an_unknown_name_lists_every_documented_api() -> None:
    # before: "documented APIs: listCalendars, ..., deleteEvent, updateEvent, ." with
    # rsvpEvent and queryFreeBusy never shown, and a stray comma and period
    (f,) = Scanner(CALENDAR, retriever=None).iter_findings("<API>bookRoom(room='A')</API>")
    assert f.code == "E2"
    assert f.message == (
        "API 'bookRoom' does not exist; documented APIs: listCalendars, createCalendar, "
        "getCalendar, listEvents, createEvent, getEvent, deleteEvent, updateEvent, "
        "rsvpEvent, queryFreeBusy"
    )
    assert f.expected == list(CALENDAR.names)
    feedback = render_feedback([f])
    assert "updateEvent, rsvpEvent, queryFreeBusy.\n" in feedback
    assert ", ." not in feedback and ", ...." not in feedback


def test_many_apis_are_listed_up_to_forty_then_counted() -> None:
    tools = [{"name": f"tool_{i:03}", "parameters": {"type": "object"}} for i in range(120)]
    (f,) = Scanner(ApiCatalog.from_tools(tools), retriever=None).iter_findings("zzz()")
    listed = ", ".join(f"tool_{i:03}" for i in range(40))
    assert f.message.endswith(f"documented APIs: {listed} and 80 more")
    assert len(f.expected) == 40
    assert render_feedback([f]).count(" and 80 more.") == 1


def test_a_literal_variant_has_its_arguments_checked_in_the_same_round() -> None:
    # before: E2.2 only; E3.2 and E4.2 came one and two feedback rounds later
    found = Scanner(CALENDAR, retriever=None).iter_findings(
        "<API>list_events(calendar_id='c_team_01', status='done')</API>"
    )
    assert [(f.code, f.location) for f in found] == [
        ("E2.2", ("api",)),
        ("E3.2", ("argument", "calendar_id")),
        ("E3.4", ("path", "calendarId")),
        ("E4.2", ("argument", "status")),
    ]


def test_a_keyboard_slip_has_its_arguments_checked_too() -> None:
    found = Scanner(CALENDAR, retriever=None).iter_findings(
        "<API>getEvnt(calendarId='c1', eventID='e1')</API>"
    )
    assert [(f.code, f.location) for f in found] == [
        ("E2", ("api",)),
        ("E3.2", ("argument", "eventID")),
        ("E3.4", ("path", "eventId")),
    ]


def test_a_name_by_meaning_alone_judges_no_arguments() -> None:
    # removeEvent is not deleteEvent in other words: its arguments are not judged
    # against a guess (nor is the call renamed)
    found = Scanner(CALENDAR, retriever=None).iter_findings(
        "<API>removeEvent(calendarId='c1', event='e1')</API>"
    )
    assert [f.code for f in found] == ["E2"]


def test_the_decision_repairs_the_name_and_feeds_back_the_rest_at_once() -> None:
    [decision] = Decider(Scanner(CALENDAR, retriever=None)).decide(
        "<API>list_events(calendar_id='c_team_01', status='done')</API>"
    )
    assert decision.action == "feedback"
    assert [str(r) for r in decision.repairs] == [
        "E2.2 api: 'list_events' -> 'listEvents'",
        "E3.2 argument.calendar_id: 'calendar_id' -> 'calendarId'",
    ]
    assert [f.code for f in decision.errors] == ["E4.2"]
    # the findings of the call as written carry the fixes of both rounds
    fixed = {f.code: f.fix for f in decision.findings}
    assert fixed["E2.2"] is not None and fixed["E3.2"] is not None
