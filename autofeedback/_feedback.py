"""Static feedback for the model, rendered from findings (never from ``str(exc)``).

The paper's five-part template: (1) there is an error; (2) where it is and what it is;
(3) which checks already passed; (4) the likely cause and the correction; (5) please
regenerate the request.
"""

from __future__ import annotations

from collections.abc import Sequence

from autofeedback._findings import Finding, Repair
from autofeedback._model import ToolCallShape

__all__ = ["render_feedback"]

_PASSED = {
    "E1": "",
    "E2": "The request was parsed successfully.",
    "E3": "The request was parsed successfully and the API name is correct.",
    "E4": "The request was parsed successfully, the API name is correct and the parameter "
    "names are correct.",
    "E5": "The request was parsed successfully and the API and parameter names are correct.",
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
    "E5.1": "The value refers to a variable or step that no earlier call produced.",
    "E5.2": "The value reads a field that the earlier call's documented response does not have.",
    "E5.3": "The value is not given by the user, an earlier response or the documentation; "
    "it looks made up or is a placeholder.",
    "E5.4": "The referenced field has a documented type that does not fit this parameter.",
    "E5": "The value does not come from where the documentation says it can come from.",
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


def _correction(f: Finding, shape: ToolCallShape | None = None, tool_call: bool = False) -> str:
    if f.code == "E1" and (shape is not None or tool_call):
        # a native tool call: never ask for the <API> text format
        how = f" as {_TOOL_CALL[shape]}" if shape is not None else ""
        return (
            f"Call the tool again{how}: one documented tool name and its arguments as one "
            "JSON object."
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
    if _family(f.code) == "E5":
        return _flow_correction(f)
    return "Give a value that satisfies the documented constraint."


def _flow_correction(f: Finding) -> str:
    if f.code == "E5.1":
        if f.suggestion:
            return f"Call {f.suggestion} first and use its result."
        return "Assign the result of an earlier call to the variable before using it."
    if f.code == "E5.2":
        if f.suggestion:
            return f"Use the documented path {f.suggestion!r}."
        return "Use a field the earlier call's documented response has."
    if f.code == "E5.3":
        # the suggestion names the producer and the field: "call X first: its response has `y`"
        if f.suggestion:
            return f"{f.suggestion[0].upper()}{f.suggestion[1:]}, and pass that value."
        return "Use the value the user gave, or one an earlier response returned."
    if f.code == "E5.4" and f.expected is not None:
        return f"Pass a single field of type {_show(f.expected)}, e.g. one item's field."
    return "Take the value from the earlier response that documents it."


def _show(value: object) -> str:
    if isinstance(value, list):
        return " or ".join(map(str, value))
    return str(value)


def render_feedback(
    finding: Finding | Sequence[Finding],
    *,
    corrected: str | None = None,
    shape: ToolCallShape | None = None,
    tool_call: bool = False,
    repairs: Sequence[Repair] = (),
) -> str:
    """The feedback message for the model about one finding (or the first of several,
    listing the others briefly). ``corrected``: the request with every fix applied
    (:func:`autofeedback.loop._repair.corrected_call`), shown before the closing request.
    ``shape``: the request was a native tool call of that provider API; the feedback then
    speaks of tool calls in that shape (never the ``<API>`` text format). ``tool_call``:
    the request was a tool call of no provider shape (an MCP ``tools/call``, a guarded
    function's call); worded as a tool call too. "API request" is for text requests only.
    ``repairs``: what was already repaired in the call (:mod:`autofeedback.decide`),
    listed so that the model keeps those changes.

    >>> from autofeedback import Finding
    >>> text = render_feedback(Finding("E2.2", ("api",), "user_login", expected="userLogin",
    ...     suggestion="userLogin", message="API 'user_login' does not exist"))
    >>> print(text.splitlines()[1])
    Error E2.2 (literal variant of an API name) at api: API 'user_login' does not exist.
    >>> text.splitlines()[-2].endswith("Correction: Use the documented API 'userLogin'.")
    True
    >>> doubt = Finding("E2.1", ("api",), "getTodo", severity="warning", message="x")
    >>> render_feedback(doubt).splitlines()[0]
    'Your API request may have a problem; check it before sending.'
    >>> e1 = Finding("E1", (), "<tool_call>{...", message="the JSON is cut off",
    ...     suggestion="<API>searchBooks(query='dune')</API>")
    >>> "rewritten in the expected format, is <API>searchBooks(query='dune')</API>" in (
    ...     render_feedback(e1))
    True
    >>> native = render_feedback(e1, shape="anthropic")
    >>> "<API>" in native, native.splitlines()[-1]
    (False, 'Please call the tool again with the corrected arguments.')
    >>> mcp = render_feedback(Finding("E3.2", ("argument", "City"), "City", message="x"),
    ...     tool_call=True)
    >>> print(mcp.splitlines()[0])
    There is an error in your tool call.
    >>> print(mcp.splitlines()[-1])
    Please call the tool again with the corrected arguments.
    """
    findings = [finding] if isinstance(finding, Finding) else list(finding)
    if not findings:
        raise ValueError("render_feedback needs at least one finding")
    first = findings[0]
    where = ".".join(first.location) or "the output"
    tool_call = tool_call or shape is not None
    what = "tool call" if tool_call else "API request"
    if first.severity == "error":
        lines = [f"There is an error in your {what}."]
        label = "Error"
    else:
        # a warning is the scanner's doubt (an E2.1 below its confident margin): the words
        # must not claim more than the severity, the ok flag and the exit code do
        lines = [f"Your {what} may have a problem; check it before sending."]
        label = "Possible error"
    lines.append(f"{label} {first.code} ({first.title}) at {where}: {first.message.rstrip('.')}.")
    if first.doc:
        lines.append(f"Documentation: {first.doc}")
    passed = _PASSED[_family(first.code)]
    if passed and tool_call:
        passed = passed.replace("request", "tool call").replace("API name", "tool name")
    if passed:
        lines.append(passed)
    cause = _CAUSE[first.code]
    if tool_call and first.code == "E1":
        cause = (
            "The tool call could not be read: it names no tool, or its arguments are not "
            "a JSON object."
        )
    lines.append(f"Likely cause: {cause} Correction: {_correction(first, shape, tool_call)}")
    if len(findings) > 1:
        lines.append(f"Other problems in the same {'tool call' if tool_call else 'request'}:")
        lines.extend(f"- {f}" for f in findings[1:6])
    if repairs:
        lines.append("Already repaired (keep these changes):")
        lines.extend(f"- {r}" for r in repairs[:6])
    if corrected:
        what_fixed = "tool call" if tool_call else "request"
        lines.append(f"The {what_fixed} with these corrections: {corrected}")
        if "=<" in corrected or '": "<' in corrected:
            lines.append("Replace each <type> placeholder with the value from the user's request.")
    again = (
        "call the tool again with the corrected arguments"
        if tool_call
        else "regenerate the API request"
    )
    lines.append(
        f"Please {again}."
        if first.severity == "error"
        else f"If it is wrong, {again}; if it is right, keep it."
    )
    return "\n".join(lines)
