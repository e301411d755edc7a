"""Small helpers every spec loader shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autofeedback._exceptions import SpecError
from autofeedback._model import Operation

__all__ = ["Loaded", "join", "name_of", "required_names", "text"]

#: What every loader returns: the operations and the server URLs.
Loaded = tuple[list[Operation], list[str]]


def join(prefix: str, part: str) -> str:
    """A place in the document for error messages: ``paths./pets.get`` or ``tools[3]``."""
    if part.startswith("["):
        return f"{prefix}{part}"
    return f"{prefix}.{part}" if prefix else part


def text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def required_names(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required")
    if isinstance(required, list):
        return {r for r in required if isinstance(r, str)}
    return set()


def name_of(item: Mapping[str, Any], source: str, where: str, what: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"{what} has no 'name'", source=source, where=where)
    return name.strip()
