"""``autofeedback flow``: the data-flow view, text and JSON, with overrides."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from autofeedback.cli import run

TOOLS = [
    {
        "name": "GetUserToken",
        "parameters": {"type": "object", "properties": {"username": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}},
    },
    {
        "name": "DeleteAccount",
        "parameters": {
            "type": "object",
            "properties": {"token": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["token"],
        },
    },
]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["flow", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def spec(tmp_path: Path) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return str(path)


def test_text_view_of_one_operation(spec: str) -> None:
    code, out, err = _run("--spec", spec, "DeleteAccount")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "DeleteAccount",
        "  token (required, argument)",
        "    1. GetUserToken -> token  [name 0.79]",
        "  reason (argument)",
        "    no producer: a value from the user or the instruction",
        "",
    ]


def test_json_view_of_every_operation(spec: str) -> None:
    code, out, _ = _run("--spec", spec, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"GetUserToken", "DeleteAccount"}
    token = data["DeleteAccount"]["token"]
    assert token["required"] is True and token["user_supplied"] is False
    assert token["producers"][0] == {
        "operation": "GetUserToken",
        "path": "token",
        "via": "name",
        "score": 0.79,
        "schema": {"type": "string"},
    }


def test_overrides_file(spec: str, tmp_path: Path) -> None:
    links = tmp_path / "links.yaml"
    links.write_text("DeleteAccount:\n  token: null\n  reason: 'GetUserToken:token'\n")
    code, out, _ = _run("--spec", spec, "DeleteAccount", "--links", str(links))
    assert code == 0
    assert "  token (required, argument)\n    the user supplies it (override)\n" in out
    assert "    1. GetUserToken -> token  [override 2.00]\n" in out


def test_graphql_responses_file(tmp_path: Path) -> None:
    tools = [
        {"name": "GET_me", "parameters": {"type": "dict", "properties": {}}},
        {
            "name": "POST_users__user_id__playlists",
            "parameters": {"type": "dict", "properties": {"user_id": {"type": "string"}}},
        },
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "schema.graphql").write_text(
        "type Me { id: String display_name: JSON }\ntype Query { GET_me: Me }\n"
    )
    code, out, _ = _run(
        "--spec",
        str(tmp_path / "tools.json"),
        "--responses",
        str(tmp_path / "schema.graphql"),
        "--format",
        "json",
        "POST_users__user_id__playlists",
    )
    assert code == 0
    top = json.loads(out)["POST_users__user_id__playlists"]["user_id"]["producers"][0]
    assert (top["operation"], top["path"]) == ("GET_me", "id")


def test_real_spec_by_method_and_path(shared_data_dir: Path) -> None:
    spec = str(shared_data_dir / "restbench" / "tmdb_oas.json")
    code, out, _ = _run("--spec", spec, "GET /person/{person_id}", "--top", "1")
    assert code == 0
    assert out.splitlines()[:3] == [
        "GET_person-person_id  GET /person/{person_id}",
        "  person_id (required, path)",
        "    1. GET_search-person -> results[].id  [resource 0.71]",
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["Nope"], "unknown operation 'Nope'"),
        (["--links", "{missing}"], "cannot read the overrides file"),
        (["--responses", "{bad}"], "not GraphQL SDL"),
        (["--format", "xml"], "invalid choice"),
    ],
)
def test_bad_input_is_exit_2(spec: str, tmp_path: Path, extra: list[str], message: str) -> None:
    (tmp_path / "bad.graphql").write_text("type Query {")
    args = [
        a.replace("{missing}", str(tmp_path / "nope.yaml")).replace(
            "{bad}", str(tmp_path / "bad.graphql")
        )
        for a in extra
    ]
    code, out, err = _run("--spec", spec, *args)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
