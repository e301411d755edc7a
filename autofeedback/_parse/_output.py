"""What a model wrote, read as API requests: a string in any supported format, an
assistant message or completion, a call mapping, or a request already parsed.

Below the scanner and the sequences, which both read outputs through
:func:`to_requests`; the parsers are imported on the first output that needs them.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest, Output

__all__ = ["excerpt", "to_requests"]


def to_requests(output: Output) -> tuple[Sequence[ApiRequest], Finding | None]:
    """Normalise what :class:`Scanner` accepts into parsed requests, or an E1 finding."""
    if isinstance(output, ApiRequest):
        return [output], None
    if type(output) is dict and len(output) == 2:
        name, arguments = output.get("name"), output.get("arguments")
        if isinstance(name, str) and name and name == name.strip() and type(arguments) is dict:
            # the canonical {"name", "arguments"} call (most audit records): nothing to
            # normalise, so none of the format detection below
            return [ApiRequest(name=name, arguments=dict(arguments))], None
    from autofeedback._parse import (
        RequestFormatError,
        parse_output,
        request_from_call,
        request_from_http,
    )

    if isinstance(output, Mapping) and _is_message(output):
        # a whole assistant message / completion response: its tool_calls are the requests
        output = json.dumps(output, default=str)
    elif isinstance(output, Mapping):
        try:
            if "method" in output or "url" in output:
                return [request_from_http(output)], None
            return [request_from_call(output)], None
        except RequestFormatError as exc:
            return [], Finding("E1", (), excerpt(output), message=str(exc))
    if not isinstance(output, str):
        return [], Finding("E1", (), repr(type(output)), message="output is not text")
    result = parse_output(output)
    if result.requests:
        return result.requests, None
    return [], Finding(
        "E1",
        (),
        excerpt(output),
        expected=result.format_hint,
        suggestion=result.suggestion,
        message=result.problem or "no API request found in the output",
    )


def _is_message(value: Mapping[str, Any]) -> bool:
    return any(k in value for k in ("tool_calls", "choices", "role", "function_call"))


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 200
_REPR.maxlevel = 4


def excerpt(value: Any, limit: int = 200) -> str:
    if isinstance(value, str):
        text = value[: limit + 1]
    else:
        try:  # bounded: a huge or deeply nested mapping is shown by its start
            text = _REPR.repr(value)
        except Exception:
            text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."
