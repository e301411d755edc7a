"""``guard`` gives one verdict per spec, however the spec was given (issue 40): a
guarded function receives Python values, so ``maxResults="5"`` for an integer is
repaired to ``5`` whether the guard was given the OpenAPI file, its catalog or the
catalog's tool list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autofeedback import ApiCatalog, ToolCallRejected, guard

SPEC = Path(__file__).resolve().parents[1] / "data" / "specs" / "calendar.yaml"
CATALOG = ApiCatalog.from_file(SPEC)
FORMS: dict[str, Any] = {
    "file": str(SPEC),
    "catalog": CATALOG,
    "tools": CATALOG.to_tools(),
}


def _guarded(form: str) -> Any:
    @guard(FORMS[form], "listEvents", retriever=None)
    def list_events(calendarId: str, **options: Any) -> dict[str, Any]:
        return {"calendarId": calendarId, **options}

    return list_events


@pytest.mark.parametrize("form", FORMS)
def test_a_number_written_as_text_is_repaired_whatever_the_form(
    form: str, caplog: pytest.LogCaptureFixture
) -> None:
    # before: with the file or the catalog the function received maxResults="5" (a
    # query parameter's text is read as a number over HTTP; a function gets the string)
    got = _guarded(form)(calendarId="c_team_01", maxResults="5")
    assert got == {"calendarId": "c_team_01", "maxResults": 5}
    assert type(got["maxResults"]) is int
    assert "E4.1 argument.maxResults: '5' -> 5" in caplog.text


@pytest.mark.parametrize(
    ("arguments", "codes"),
    [
        ({"calendarId": "c1", "maxResults": "ten"}, ["E4.1"]),
        ({"calendarId": "c1", "maxResults": 0}, ["E4.2"]),
        ({"calendarId": "c1", "status": "done"}, ["E4.2"]),
        ({"calendarId": "c1", "maxResults": 5.5}, ["E4.1"]),
    ],
)
def test_every_form_gives_one_verdict(arguments: dict[str, Any], codes: list[str]) -> None:
    verdicts = {}
    for form in FORMS:
        with pytest.raises(ToolCallRejected) as caught:
            _guarded(form)(**arguments)
        verdicts[form] = [(f.code, f.location, f.message) for f in caught.value.findings]
    assert verdicts["file"] == verdicts["catalog"] == verdicts["tools"]
    assert [code for code, _, _ in verdicts["file"]] == codes
