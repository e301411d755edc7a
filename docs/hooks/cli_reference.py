"""MkDocs hook: the command-line reference, rendered from ``autofeedback.cli``'s parser.

A page that holds the marker ``<!-- cli-reference -->`` gets, in its place, one section
per command: its description, usage, a table of its arguments (with their defaults) and
its epilog (exit codes, examples), all read from the argparse parser the command itself
uses. Nothing is copied by hand, so a flag added to ``autofeedback/cli/`` is in the next
build.

argparse has no public API to walk a parser, so this reads ``parser._actions``, as
sphinx-argparse and every other argparse documenter do.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # a clone built without `pip install -e .`
    sys.path.insert(0, str(ROOT))

MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())


def render() -> str:
    """The reference in Markdown, one ``##`` section per command."""
    from autofeedback.cli import _parser

    parser = _parser({})  # no pyproject.toml defaults: the reference shows the built-in ones
    sections = [_section(parser, "autofeedback", "autofeedback")]
    for name, sub in _commands(parser):
        nested = list(_commands(sub))
        sections.append(_section(sub, f"autofeedback {name}", name))
        for inner, parser_ in nested:
            sections.append(_section(parser_, f"autofeedback {name} {inner}", f"{name}-{inner}"))
    return "\n\n".join(sections)


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _section(parser: argparse.ArgumentParser, title: str, anchor: str) -> str:
    lines = [f"## `{title}` {{ #{anchor} }}", ""]
    if parser.description:
        lines += [_escape_prose(parser.description), ""]
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```text", usage, "```", ""]
    rows = [_row(parser, a) for a in parser._actions if _shown(a)]
    if rows:
        lines += ["| argument | default | what it does |", "|---|---|---|", *rows, ""]
    if parser.epilog:
        lines += ["```text", parser.epilog.strip("\n"), "```", ""]
    return "\n".join(lines).rstrip()


def _shown(action: argparse.Action) -> bool:
    if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
        return False
    return not isinstance(action, argparse._SubParsersAction)


def _row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(f"`{o}`" for o in action.option_strings)
        takes = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
        if takes:
            names += f" `{action.metavar or action.dest.upper()}`"
    else:
        names = f"`{action.metavar or action.dest}`"
    if action.choices is not None and not isinstance(action.choices, dict):
        names += "<br>" + " \\| ".join(f"`{c}`" for c in action.choices)
    return f"| {names} | {_default(action)} | {_cell(_help(parser, action))} |"


def _default(action: argparse.Action) -> str:
    value = action.default
    if isinstance(action, argparse._VersionAction):
        return ""
    if value is None or value == argparse.SUPPRESS or value == []:
        return ""
    if isinstance(action, argparse.BooleanOptionalAction) and isinstance(value, bool):
        return "on" if value else "off"
    if value is False and action.nargs == 0:
        return "off"
    return f"`{value}`"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """``action.help`` with argparse's ``%(default)s``-style fields filled in."""
    text = action.help or ""
    if "%" not in text:
        return text
    params: dict[str, Any] = dict(vars(action), prog=parser.prog)
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    return text % params


def _escape_prose(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
