"""Static feedback for the model, rendered from findings (never from ``str(exc)``).

The paper's five-part template: (1) there is an error; (2) where it is and what it is;
(3) which checks already passed; (4) the likely cause and the correction; (5) please
regenerate the request.
"""

from __future__ import annotations

from collections.abc import Sequence

from autofeedback._findings import Finding
from autofeedback._model import ToolCallShape

__all__ = ["render_feedback"]

_PASSED = {
    "E1": "",
    "E2": "The request was parsed successfully.",
    "E3": "The request was parsed successfully and the API name is correct.",
    "E4": "The request was parsed successfully, the API name is correct and the parameter "
    "names are correct.",
}

_CAUSE = {
    "E1": "The output does not contain a request in a format that can be parsed.",
    "E2.1": "The API exists, but it does not do what the instruction asks for.",
    "E2.2": "The API name is written in a different case or with different separators "
    "than the documented name.",
    "E2.3": "The API name is made up; it resembles a documented API.",
    "E2": "The API name is not in the documentation.",
    "E3.1": "The parameter belongs to a different API.",
    "E3.2": "The parameter name is written in a different case or with different separators "
    "than the documented name.",
    "E3.3": "The parameter name is made up; it resembles a documented parameter.",
    "E3.4": "A parameter the documentation marks as required was left out.",
    "E3": "The parameter is not documented for this API, or it is sent in the wrong place.",
    "E4.1": "The value does not have the type the documentation gives for this parameter.",
    "E4.2": "The value breaks a constraint the documentation gives for this parameter.",
}


def _family(code: str) -> str:
    return code.split(".")[0]


#: How each provider's API calls a tool, for feedback to a model that called one natively.
_TOOL_CALL = {
    "openai-chat": "a tool call (tool_calls[].function with JSON arguments)",
    "openai-responses": "a function_call item with JSON arguments",
    "anthropic": "a tool_use block with an input object",
    "gemini": "a functionCall part with an args object",
    "bedrock": "a toolUse block with an input object",
}


def _correction(f: Finding, shape: ToolCallShape | None = None) -> str:
    if f.code == "E1" and shape is not None:
        # a native tool call: never ask for the <API> text format
        return (
            f"Call the tool again as {_TOOL_CALL[shape]}: one documented tool name and "
            "its arguments as one JSON object."
        )
    if f.code == "E1":
        if f.suggestion:
            # the model's own call, as far as it could be read, in the format asked for
            return (
                f"Your request, rewritten in the expected format, is {f.suggestion}; "
                "complete it if it was cut off and write it exactly like that."
            )
        return (
            "Write exactly one request, e.g. <API>ApiName(key1='value1', key2='value2')"
            "</API>, with every argument a literal value."
        )
    if f.code == "E2.1" and f.suggestion:
        return f"Use {f.suggestion!r} instead of {f.got!r} if it fits the instruction."
    if _family(f.code) == "E2":
        if f.suggestion:
            return f"Use the documented API {f.suggestion!r}."
        return "Choose one of the documented APIs."
    if f.code == "E3.4":
        return f"Add the required parameter {f.suggestion!r}."
    if _family(f.code) == "E3":
        if f.code == "E3" and isinstance(f.expected, str) and f.suggestion:
            return f"Send {f.suggestion!r} in the {f.expected}."
        if f.suggestion:
            return f"Replace {f.got!r} with the documented parameter {f.suggestion!r}."
        names = f.expected if isinstance(f.expected, list) else []
        if names:
            return f"Remove {f.got!r}; documented parameters: {', '.join(map(str, names))}."
        return f"Remove {f.got!r}; this API takes no such parameter."
    if f.code == "E4.1":
        return f"Give a value of type {_show(f.expected)}."
    return "Give a value that satisfies the documented constraint."


def _show(value: object) -> str:
    if isinstance(value, list):
        return " or ".join(map(str, value))
    return str(value)


def render_feedback(
    finding: Finding | Sequence[Finding],
    *,
    corrected: str | None = None,
    shape: ToolCallShape | None = None,
) -> str:
    """The feedback message for the model about one finding (or the first of several,
    listing the others briefly). ``corrected``: the request with every fix applied
    (:func:`autofeedback.loop._repair.corrected_call`), shown before the closing request.
    ``shape``: the request was a native tool call of that provider API; the feedback then
    speaks of tool calls in that shape (never the ``<API>`` text format).

    >>> from autofeedback import Finding
    >>> text = render_feedback(Finding("E2.2", ("api",), "user_login", expected="userLogin",
    ...     suggestion="userLogin", message="API 'user_login' does not exist"))
    >>> print(text.splitlines()[1])
    Error E2.2 (literal variant of an API name) at api: API 'user_login' does not exist.
    >>> text.splitlines()[-2].endswith("Correction: Use the documented API 'userLogin'.")
    True
    >>> e1 = Finding("E1", (), "<tool_call>{...", message="the JSON is cut off",
    ...     suggestion="<API>searchBooks(query='dune')</API>")
    >>> "rewritten in the expected format, is <API>searchBooks(query='dune')</API>" in (
    ...     render_feedback(e1))
    True
    >>> native = render_feedback(e1, shape="anthropic")
    >>> "<API>" in native, native.splitlines()[-1]
    (False, 'Please call the tool again with the corrected arguments.')
    """
    findings = [finding] if isinstance(finding, Finding) else list(finding)
    if not findings:
        raise ValueError("render_feedback needs at least one finding")
    first = findings[0]
    where = ".".join(first.location) or "the output"
    what = "API request" if shape is None else "tool call"
    lines = [f"There is an error in your {what}."]
    lines.append(f"Error {first.code} ({first.title}) at {where}: {first.message.rstrip('.')}.")
    if first.doc:
        lines.append(f"Documentation: {first.doc}")
    passed = _PASSED[_family(first.code)]
    if passed and shape is not None:
        passed = passed.replace("request", "tool call").replace("API name", "tool name")
    if passed:
        lines.append(passed)
    cause = _CAUSE[first.code]
    if shape is not None and first.code == "E1":
        cause = (
            "The tool call could not be read: it names no tool, or its arguments are not "
            "a JSON object."
        )
    lines.append(f"Likely cause: {cause} Correction: {_correction(first, shape)}")
    if len(findings) > 1:
        lines.append("Other problems in the same request:")
        lines.extend(f"- {f}" for f in findings[1:6])
    if corrected:
        what_fixed = "request" if shape is None else "tool call"
        lines.append(f"The {what_fixed} with these corrections: {corrected}")
        if "=<" in corrected or '": "<' in corrected:
            lines.append("Replace each <type> placeholder with the value from the user's request.")
    if shape is None:
        lines.append("Please regenerate the API request.")
    else:
        lines.append("Please call the tool again with the corrected arguments.")
    return "\n".join(lines)
