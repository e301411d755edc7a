"""``[tool.autofeedback]`` in the nearest ``pyproject.toml``: where it is found, how each
key is checked, and how it becomes the commands' defaults (a flag on the command line
still wins)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autofeedback.cli._common import _Usage

#: ``[tool.autofeedback]`` keys -> (argparse dest, expected type, the commands using it);
#: paths are relative to the pyproject.toml that names them
_CONFIG_KEYS: dict[str, tuple[str, type, tuple[str, ...]]] = {
    "spec": ("spec", list, ("scan", "audit", "sandbox", "run", "build")),
    "llm": ("llm", str, ("run",)),
    "model": ("model", str, ("run",)),
    "base-url": ("base_url", str, ("run",)),
    "index": ("index", str, ("run", "build")),
    "max-static": ("max_static", int, ("run",)),
    "max-dynamic": ("max_dynamic", int, ("run",)),
    "timeout": ("timeout", float, ("run",)),
    "semantic": ("no_semantic", bool, ("scan", "audit")),
    "repair": ("repair", str, ("run", "proxy", "mcp-proxy")),
}
_PATH_KEYS = ("spec", "index")
#: ``autofeedback`` as a TOML key or table name: ``[tool.autofeedback]``,
#: ``tool.autofeedback.spec =``, ``autofeedback = {...}`` under ``[tool]``, quoted or not
_NAMED = re.compile(r"autofeedback[\"']?\s*[.=\]]")


def find_config(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The ``[tool.autofeedback]`` table of the nearest ``pyproject.toml`` from ``start``
    (default: the current folder) upwards, or None when no pyproject.toml has one.

    A pyproject.toml whose text never names ``autofeedback`` as a key or table
    (:data:`_NAMED`: a dependency ``"autofeedback-api>=0.1"`` does not) holds no such
    table and is not parsed: the project around a command (its own TOML, broken or not)
    costs nothing, and the TOML parser is imported only for a file that may configure us.

    >>> find_config(Path("/"))  # doctest: +SKIP
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            text = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _Usage(f"{candidate}: {exc}") from None
        if _NAMED.search(text) is None:
            continue
        if sys.version_info >= (3, 11):  # noqa: UP036 - setup.cfg still allows 3.10
            import tomllib
        else:  # pragma: no cover - exercised on 3.10 only
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _Usage(f"{candidate}: {exc}") from None
        table = data.get("tool", {}).get("autofeedback")
        if table is None:
            continue
        if not isinstance(table, dict):
            raise _Usage(f"{candidate}: [tool.autofeedback] must be a table")
        return candidate, table
    return None


def _config_values(found: tuple[Path, dict[str, Any]] | None) -> dict[str, Any]:
    """``[tool.autofeedback]`` as argparse dests, each value checked."""
    if found is None:
        return {}
    path, table = found
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _CONFIG_KEYS:
            known = ", ".join(sorted(_CONFIG_KEYS))
            raise _Usage(f"{path}: [tool.autofeedback] has no key {key!r}; known: {known}")
        dest, kind, _ = _CONFIG_KEYS[key]
        if kind is list and isinstance(value, str):
            value = [value]
        if kind is list:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if key == "repair" and ok and value not in ("sure", "off"):
            ok = False
        if not ok:
            shown = "a list of strings" if kind is list else f"a {kind.__name__}"
            if key == "repair":
                shown = "'sure' or 'off'"
            raise _Usage(f"{path}: [tool.autofeedback] {key} must be {shown}")
        if key in _PATH_KEYS:
            value = (
                [str(path.parent / v) for v in value] if kind is list else str(path.parent / value)
            )
        values[dest] = (not value) if key == "semantic" else value
    return values


def _configure(parsers: Mapping[str, argparse.ArgumentParser], values: Mapping[str, Any]) -> None:
    """Configuration as each command's defaults, so a flag on the command line wins.
    ``spec`` is filled after parsing instead: it appends, and would add to the default."""
    for key, (dest, _, commands) in _CONFIG_KEYS.items():
        if dest in values and key != "spec":
            for name in commands:
                parsers[name].set_defaults(**{dest: values[dest]})
