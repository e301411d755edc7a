"""``[tool.autofeedback]`` in the nearest pyproject.toml: found from the current folder
upwards, its paths relative to the file, a flag on the command line winning over it, and
an unknown key said as bad input."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from autofeedback.cli import find_config, run

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = str(ROOT / "specs" / "examples" / "bookshop.yaml")
TOOLS = str(Path(__file__).parents[1] / "data" / "scan" / "tools.json")


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def test_pyproject_configuration_is_found_upwards_and_flags_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "api.json").write_text(Path(TOOLS).read_text())
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.autofeedback]
            spec = "api.json"       # relative to this file
            semantic = false
            max-static = 1
            """
        )
    )
    monkeypatch.chdir(project / "sub")
    found = find_config()
    assert found is not None and found[0] == project / "pyproject.toml"
    code, out, err = cli("scan", "<API>get_weather(city='Paris')</API>")
    assert code == 0 and "no findings" in out, err
    # a flag on the command line wins over the file
    code, out, _ = cli("scan", "--spec", BOOKSHOP, "GET /books?query=dune&limit=ten")
    assert code == 1 and "E4.1" in out
    code, out, _ = cli("run", "--help")
    assert "(default: 1)" in out  # max-static from the file is the shown default


def test_pyproject_unknown_key_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.autofeedback]\nspecs = ['a.yaml']\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("scan", "GET /x")
    assert code == 2 and "no key 'specs'" in err and "known: " in err


def test_a_pyproject_that_does_not_configure_us_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the project around a command names us as a dependency and its TOML is broken: not
    # ours to judge, and not parsed (a file naming [tool.autofeedback] still is)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = ["autofeedback-api>=0.1"]\n[tool.other\n'
    )
    monkeypatch.chdir(tmp_path)
    assert find_config() is None
    code, out, err = cli("scan", "--spec", BOOKSHOP, "GET /books?query=dune&limit=ten")
    assert code == 1 and "E4.1" in out, err
    (tmp_path / "pyproject.toml").write_text("[tool.autofeedback]\nspec = 'a.yaml\n")
    code, _, err = cli("scan", "GET /x")
    assert code == 2 and f"{tmp_path / 'pyproject.toml'}: " in err


@pytest.mark.parametrize(
    "text",
    [
        "[tool.autofeedback]\nsemantic = false\n",
        '[tool."autofeedback"]\nsemantic = false\n',
        "tool.autofeedback.semantic = false\n",
        "[tool]\nautofeedback = { semantic = false }\n",
        "[tool]\nautofeedback.semantic = false\n",
    ],
)
def test_every_toml_spelling_of_the_table_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert find_config() == (tmp_path / "pyproject.toml", {"semantic": False})
