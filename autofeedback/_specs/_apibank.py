"""API-Bank docs (``{"name", "description", "input_parameters", "output_parameters"}``),
whose types are words (``str``, ``int``, ``list(str)``, ``datetime``) and whose optional
parameters are only marked in their descriptions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from autofeedback._specs._common import join, name_of, text
from autofeedback.core._exceptions import SpecError
from autofeedback.core._model import Operation, Parameter, Response

__all__ = ["api_bank_optional", "api_bank_type", "load_api_bank"]

# API-Bank types: "str", "int", "list(str)", "datetime"...
_API_BANK_LIST = re.compile(r"^(?:list|array|tuple)\s*[\[(]\s*(.+?)\s*[\])]$", re.IGNORECASE)
_API_BANK_TYPES: Mapping[str, Mapping[str, Any]] = {
    "str": {"type": "string"},
    "string": {"type": "string"},
    "int": {"type": "integer"},
    "integer": {"type": "integer"},
    "float": {"type": "number"},
    "number": {"type": "number"},
    "bool": {"type": "boolean"},
    "boolean": {"type": "boolean"},
    "list": {"type": "array"},
    "array": {"type": "array"},
    "tuple": {"type": "array"},
    "dict": {"type": "object"},
    "object": {"type": "object"},
    "json": {},
    "any": {},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
}

#: Descriptions that make an API-Bank input parameter optional (API-Bank has no
#: ``required`` list): "[Optional] ...", "Default is auto.", "Only needed for the
#: first call." (ForgotPassword's two-step parameters), "if not specified".
_API_BANK_OPTIONAL = re.compile(
    r"\boptional\b|\bdefaults?\b|\bonly needed\b|\bif not (?:specified|provided|given)\b",
    re.IGNORECASE,
)


def api_bank_type(name: Any) -> dict[str, Any]:
    """``"list(str)"`` -> ``{"type": "array", "items": {"type": "string"}}``."""
    if not isinstance(name, str):
        return {}
    key = name.strip()
    m = _API_BANK_LIST.match(key)
    if m:
        return {"type": "array", "items": api_bank_type(m.group(1))}
    return dict(_API_BANK_TYPES.get(key.lower(), {}))


def api_bank_optional(description: str) -> bool:
    """Whether an API-Bank parameter description marks the parameter optional."""
    return bool(_API_BANK_OPTIONAL.search(description))


def load_api_bank(doc: Mapping[str, Any], source: str, where: str) -> Operation:
    name = name_of(doc, source, where, "API")
    inputs = doc.get("input_parameters") or {}
    if not isinstance(inputs, dict):
        raise SpecError(
            "'input_parameters' must be an object",
            source=source,
            where=join(where, "input_parameters"),
        )
    parameters: list[Parameter] = []
    for pname, spec in inputs.items():
        spec = spec if isinstance(spec, dict) else {"type": spec}
        description = text(spec.get("description"))
        schema = api_bank_type(spec.get("type"))
        if description:
            schema["description"] = description
        parameters.append(
            Parameter(
                name=str(pname),
                location="argument",
                schema=schema,
                required=not api_bank_optional(description),
                description=description,
            )
        )
    outputs = doc.get("output_parameters") or {}
    responses: tuple[Response, ...] = ()
    if isinstance(outputs, dict) and outputs:
        props = {}
        for oname, spec in outputs.items():
            spec = spec if isinstance(spec, dict) else {"type": spec}
            props[str(oname)] = api_bank_type(spec.get("type")) | (
                {"description": text(spec["description"])} if spec.get("description") else {}
            )
        responses = (Response("200", schema={"type": "object", "properties": props}),)
    return Operation(
        name=name,
        description=text(doc.get("description")),
        parameters=tuple(parameters),
        responses=responses,
        source=source,
    )
