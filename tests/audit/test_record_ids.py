"""A record's id is redacted with the credentials the record sends, and only those."""

from __future__ import annotations

import json

from autofeedback import audit_lines
from autofeedback.core._redact import REDACTED

TOOLS = [
    {
        "name": "login",
        "parameters": {
            "type": "object",
            "properties": {"user": {"type": "string"}, "token": {"type": "string"}},
        },
    }
]


def _ids(*records: dict[str, object]) -> list[object]:
    lines = [json.dumps(r) for r in records]
    return [r.id for r in audit_lines(lines, None, retriever=None)]


def test_a_tool_list_registers_no_credential() -> None:
    # the schema under the credential-named property ("string", its description) is
    # documentation: an id that happens to contain it stays readable
    call = {"name": "login", "arguments": {"user": "ann"}}
    assert _ids({"id": "string-7", "tools": TOOLS, "call": call}) == ["string-7"]


def test_a_credential_the_call_sends_is_masked_in_the_id() -> None:
    call = {"name": "login", "arguments": {"user": "ann", "token": "tok-secret-9"}}
    assert _ids({"id": "tok-secret-9", "tools": TOOLS, "call": call}) == [REDACTED]
