"""The messages the loop sends the model: the documentation prompt, static feedback
turns and the ReAct-style dynamic feedback turn (action, observation, documentation)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from autofeedback._model import Operation

__all__ = ["describe_operations", "dynamic_feedback", "initial_messages"]

SYSTEM = (
    "You are an assistant that fulfils the user's request by calling exactly one web API.\n"
    "Available APIs:\n{docs}\n\n"
    "Answer with exactly one API request and nothing else, written as\n"
    "<API>ApiName(parameter_name='text value', other_parameter=42)</API>\n"
    "For example, for an API GetWeather with parameters city and days, the request for a "
    "three-day forecast in Paris is <API>GetWeather(city='Paris', days=3)</API>.\n"
    "Use only the API names and parameter names documented above, with values of the "
    "documented types, taken from the user's request."
)


def _type(schema: Mapping[str, Any]) -> str:
    t = schema.get("type")
    text = "/".join(t) if isinstance(t, list) else str(t or "any")
    if isinstance(schema.get("enum"), list):
        text += " one of " + ", ".join(repr(v) for v in schema["enum"][:10])
    if isinstance(schema.get("format"), str):
        text += f" ({schema['format']})"
    return text


def describe_operations(ops: Iterable[Operation], *, max_chars: int = 12_000) -> str:
    """Compact documentation of ``ops`` for a prompt, cut at ``max_chars``."""
    parts: list[str] = []
    size = 0
    for op in ops:
        lines = [f"- {op.name}: {' '.join(op.description.split())[:300]}"]
        for p in op.parameters:
            req = "required" if p.required else "optional"
            desc = " ".join(p.description.split())[:200]
            lines.append(f"    {p.name} ({_type(p.schema)}, {req}): {desc}")
        block = "\n".join(lines)
        if size + len(block) > max_chars:
            parts.append("- ... (more APIs omitted)")
            break
        parts.append(block)
        size += len(block)
    return "\n".join(parts)


def initial_messages(instruction: str, ops: Iterable[Operation]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM.format(docs=describe_operations(ops))},
        {"role": "user", "content": instruction},
    ]


def dynamic_feedback(
    action: str, status: int | None, body: str, explanation: str | None, history: list[str]
) -> str:
    """The ReAct turn: what was sent, what came back, what the docs say about it."""
    lines = [
        "Your API request was sent, but it did not succeed.",
        f"Action: {action}",
        f"Observation: HTTP {status if status is not None else 'no response'} {body}".rstrip(),
    ]
    if explanation:
        lines.append(f"Documentation about this error: {explanation}")
    if history:
        lines.append("Earlier attempts: " + " | ".join(history[-3:]))
    # no placeholder call here: small models copy ApiName(key=value) verbatim
    lines.append(
        "Thought: explain briefly what went wrong, then write the corrected request as one "
        "<API>...</API> call with a documented API name and documented parameter names."
    )
    return "\n".join(lines)
