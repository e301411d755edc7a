"""Every word autofeedback says to a model, rendered from findings (never from
``str(exc)``), one renderer per transport:

* the paper's five-part message (:func:`render_feedback`): (1) there is an error;
  (2) where it is and what it is; (3) which checks already passed; (4) the likely cause
  and the correction; (5) please regenerate the request. Worded for a text request, a
  native tool call of a provider's shape, or a tool call of none (an MCP
  ``tools/call``, a guarded function);
* a tool message (:func:`tool_feedback`): the five-part message for one tool call of a
  model's message, with the repaired call to make where every error was repaired;
* an MCP ``isError`` result (:func:`mcp_feedback`): the five-part message, preceded by
  the firm stop when the same call was rejected too often;
* a program (:func:`program_feedback`): each error on the line it is on;
* a ReAct observation (:func:`react_feedback`, :func:`restated_note`,
  :func:`dynamic_feedback`): a call that was not sent, the Action to write instead, a
  request the server refused;

and the repeat, stop and not-run texts every entry point uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest, ToolCallShape
from autofeedback.decide._corrected import call_text, sure_fix

__all__ = [
    "CALL_LINE",
    "MADE_AGAIN",
    "NOT_RUN",
    "NOT_RUN_WITH",
    "NO_PROGRAM",
    "REPEATED_CALL",
    "REPEATED_REQUEST",
    "dynamic_feedback",
    "errors_first",
    "gave_up",
    "hint",
    "inserted_turn",
    "mcp_feedback",
    "not_sent",
    "observation",
    "observed",
    "program_feedback",
    "react_feedback",
    "render_feedback",
    "repeated_call",
    "repeated_request",
    "restated_note",
    "tool_feedback",
    "unfinished_note",
    "unknown_tool",
]

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
    (:func:`autofeedback.decide._corrected.corrected_call`), shown before the closing request.
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


def errors_first(findings: Sequence[Finding]) -> list[Finding]:
    # the feedback leads with what breaks the call; warnings only ride along
    return sorted(findings, key=lambda f: f.severity != "error")


def tool_feedback(
    shape: ToolCallShape | None, decision: Any, *, corrected: str | None = None
) -> str:
    """The feedback for a tool call the decision did not forward, in the call's shape:
    what is still wrong (errors first), what was repaired already, and ``corrected``
    (the call with every named fix) when given. A call whose every error was repaired
    is told the repaired call to make."""
    remaining = decision.errors
    if remaining:
        ordered = errors_first(list(decision.remaining))
    else:  # all repaired, but the caller runs the call as written: say how to call it
        ordered = errors_first(list(decision.findings))
        request = decision.request
        if corrected is None and request is not None:
            corrected = json.dumps(
                {"name": request.name, "arguments": dict(request.arguments)},
                ensure_ascii=False,
                default=str,
            )
    return render_feedback(ordered, corrected=corrected, shape=shape, repairs=decision.repairs)


# -- programs ---------------------------------------------------------------------------

#: a line of a program that calls a function (``r = f(``, ``g(``)
CALL_LINE = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*=\s*)?[A-Za-z_][\w.]*\s*\(")


def program_feedback(
    findings: Sequence[Finding],
    program: str,
    *,
    ask: str = "in a ```python block",
    repairs: Sequence[Repair] = (),
) -> str:
    """The feedback turn for a program: each error with the line it is on, then the ask.
    ``repairs``: what was repaired in ``program`` already; the repaired program is shown.

    >>> print(program_feedback([Finding("E5.1", ("step[0]", "id"), "r.id",
    ...     message="'r' is not assigned before it is read")], "g(id=r.id)"))
    Your program has 1 problem:
    - line 1 `g(id=r.id)`: E5.1 'r' is not assigned before it is read
    Write the whole corrected program in a ```python block.
    """
    from autofeedback.flow._program import parse_program

    lines = program.splitlines()
    out = [f"Your program has {len(findings)} problem{'s' if len(findings) != 1 else ''}:"]
    try:
        steps = [call.line for call in parse_program(program)[0]]
    except Exception:  # a program the reader refuses: number the call-shaped lines
        steps = [i + 1 for i, line in enumerate(lines) if CALL_LINE.match(line)]
    fixed: dict[int, str] = {}
    for f in findings:
        where = ""
        if f.location and f.location[0].startswith("step["):
            index = int(f.location[0][5:-1])
            if index < len(steps) and 0 < steps[index] <= len(lines):
                number = steps[index]
                where = f"line {number} `{lines[number - 1].strip()[:120]}`"
                where += _read_on(f, lines, number) + ": "
                _fix_line(f, lines, number, fixed)
        shown = hint(f)
        out.append(f"- {where}{f.code} {f.message or f}{shown}")
    if fixed:
        out.append("With the suggested fixes, these lines read:")
        out += [f"line {n}: `{fixed[n].strip()}`" for n in sorted(fixed)]
    if repairs:
        # the program was repaired where the docs leave one answer: the model continues
        # from the repaired program, not from its own
        out.append("Already repaired (keep these changes); your program now reads:")
        out.append(f"```python\n{program.strip()}\n```")
    out.append(f"Write the whole corrected program {ask}.".replace(" .", "."))
    return "\n".join(out)


def _fix_line(finding: Finding, lines: Sequence[str], number: int, fixed: dict[int, str]) -> None:
    """The line with the finding's suggestion applied, into ``fixed`` (by line number):
    a function or parameter name replaced, or a response path read as documented."""
    s = finding.suggestion
    if not s or not isinstance(s, str) or not sure_fix(finding, s):
        return
    code = finding.code
    if code.startswith("E2") and isinstance(finding.got, str) and finding.got:
        line = fixed.get(number, lines[number - 1])
        new = _sub_in_code(rf"\b{re.escape(finding.got)}(?=\s*\()", s, line)
    elif code.startswith("E3") and code != "E3.4" and len(finding.location) > 1:
        name = finding.location[-1]
        line = fixed.get(number, lines[number - 1])
        new = _sub_in_code(rf"(?<![\w.]){re.escape(name)}(?=\s*=[^=])", s, line)
    elif code == "E5.2" and isinstance(finding.got, str) and finding.got:
        variable = re.match(r"[A-Za-z_]\w*", finding.got)
        if variable is None:
            return
        path = s.replace("[]", "[0]")
        read = (
            f"{variable.group(0)}.{path}" if not path.startswith("[") else variable.group(0) + path
        )
        if _fix_keyed(finding.got, read, lines, number, fixed):
            return
        for i in range(number, 0, -1):  # the line the reference is written on
            line = fixed.get(i, lines[i - 1])
            if finding.got in line:
                new = _sub_in_code(re.escape(finding.got), read, line)
                if new != line:
                    fixed[i] = new
                    return
        return
    else:
        return
    if new != line:
        fixed[number] = new


#: a Python line's string literals (one left open runs to the end of the line) and its
#: comment, found left to right so that a quote or ``#`` inside one starts nothing
_LITERAL = re.compile(r"""#.*|(?P<q>'''|\"\"\"|'|")(?:\\.|(?!(?P=q)).)*(?:(?P=q)|$)""")


def _sub_in_code(pattern: str, new: str, line: str) -> str:
    """``line`` with the first match of ``pattern`` outside its string literals and its
    comment replaced by ``new``: the same word inside a value is the value's, never the
    name a fix respells.

    >>> _sub_in_code(r"\\bPage(?==)", "page", "f(q='Page=2', Page=2)")
    "f(q='Page=2', page=2)"
    """
    literals = [m.span() for m in _LITERAL.finditer(line)]
    for m in re.finditer(pattern, line):
        if not any(start <= m.start() < end for start, end in literals):
            return line[: m.start()] + new + line[m.end() :]
    return line


def _fix_keyed(
    shown: str, read: str, lines: Sequence[str], number: int, fixed: dict[int, str]
) -> bool:
    """A read written with keys in one kind of quotes (``r["id"]``, which a finding shows
    ``r['id']``), on the line ``number`` or the nearest before it: ``read`` written in
    those keys and quotes, into ``fixed``. Whether it was."""
    from autofeedback.decide._flow_program import _chain, _written
    from autofeedback.flow._program import reads_at

    text = "\n".join(lines)
    spans = [(s, e) for s, e in reads_at(text, shown) if text.count("\n", 0, s) < number]
    if not spans:
        return False
    start, end = spans[-1]
    written = text[start:end]
    chain, new = _chain(written), _chain(read)
    if chain is None or new is None:
        return False
    quotes = {style for kind, _, style in chain[1] if kind == "field"}
    if len(quotes) != 1 or "." in quotes:
        return False
    quote = quotes.pop()
    keyed = _written(new[0], [(kind, value, quote) for kind, value, _ in new[1]])
    i = text.count("\n", 0, start) + 1
    line = fixed.get(i, lines[i - 1])
    if written not in line:
        return False
    fixed[i] = line.replace(written, keyed, 1)
    return True


def _read_on(finding: Finding, lines: Sequence[str], number: int) -> str:
    """Where a reference was written when it is not on the call's own line
    (``mid = r.items[0].id`` two lines up): ", reading `r.items[0].id` (line 2)"."""
    if not finding.code.startswith("E5") or not isinstance(finding.got, str) or not finding.got:
        return ""
    if finding.got in lines[number - 1]:
        return ""
    for i in range(number - 1, 0, -1):
        if finding.got in lines[i - 1]:
            return f", reading `{finding.got[:120]}` (line {i})"
    # written in other quotes or spacing than the finding shows it (b["books"][0]["id"])
    from autofeedback.flow._program import reads_at

    text = "\n".join(lines)
    for start, end in reversed(reads_at(text, finding.got)):
        i = text.count("\n", 0, start) + 1
        if i < number:
            return f", reading `{text[start:end][:120]}` (line {i})"
    return ""


# -- ReAct ----------------------------------------------------------------------------


def react_feedback(errors: Sequence[Finding], repairs: Sequence[Repair] = ()) -> str:
    """The Observation for a call that was not sent: its errors, what was repaired in it
    already, and how to write the next turn."""
    lines = ["Observation: this call was not sent, because it has problems:"]
    for f in errors or ():
        lines.append(f"- {f.code} {f.message or f}{hint(f)}")
    if repairs:
        lines.append("Already repaired (keep these changes):")
        lines.extend(f"- {r}" for r in repairs)
    if not errors:
        lines.append("- no API call could be read from your answer")
    if any(f.code == "E1" for f in errors):
        lines.append(
            "Write the call as Action: <API>Name(parameter='value')</API>, with a documented "
            "API name and documented parameter names."
        )
    lines.append(
        "Thought: fix it, taking values only from the request or earlier Observations, "
        "then write one Action (or the Final Answer)."
    )
    return "\n".join(lines)


def restated_note(
    errors: Sequence[Finding],
    request: ApiRequest | None,
    action: str,
    repairs: Sequence[Repair] = (),
) -> str:
    """The note for a rejected call (appended to the last message that came before it,
    the rejected turn left out): what was wrong, the Action to write, and, where that
    Action is another call that produces a value, the call meant to follow it."""
    why = "; ".join(f"{f.code} {f.message or f}" for f in errors)
    call = f"<API>{call_text(request)}</API>" if request is not None else "your call"
    note = (
        f"(Not this Action: {call}. It was not sent: {why}.) "
        f"Write this Action next, filling in each ...: Action: {action}"
    )
    if request is not None and request.name and not action.startswith(f"<API>{request.name}("):
        needed = [f.location[-1] for f in errors if f.code in ("E5.3", "E3.4") and f.location]
        if needed:
            what = " and ".join(f"`{n}`" for n in dict.fromkeys(needed))
            note += f" Then call {request.name} with the {what} that its Observation gives."
    if repairs:
        note += " (Already repaired in it: " + "; ".join(map(str, repairs)) + ".)"
    return note


def hint(f: Finding) -> str:
    """The suggestion, unless the message already offers it (E5.3's "call X first"); a
    name only listed among the documented ones ("documented APIs: A, B") is not offered."""
    said = f.message or ""
    listed = "documented APIs:" in said or "documented parameters:" in said
    if not f.suggestion or f"did you mean {f.suggestion!r}" in said:
        return ""
    # offered as itself, not inside a longer name or path (``id`` in ``results[].id``)
    offered = re.search(rf"(?<![\w.\[\]]){re.escape(f.suggestion)}(?![\w.\[\]])", said)
    if offered and not listed:
        return ""
    return f" (did you mean {f.suggestion}?)"


def dynamic_feedback(
    action: str,
    status: int | None,
    body: str,
    explanation: str | Sequence[str] | None,
    history: list[str],
) -> str:
    """The ReAct turn: what was sent, what came back, what the docs say about it.

    ``explanation``: the retrieved text, or the lines of an
    :class:`~autofeedback.loop._explain.Explanation` (its documented cause, the part of
    the request it concerns, the next call), as they are."""
    lines = [
        "Your API request was sent, but it did not succeed.",
        f"Action: {action}",
        f"Observation: HTTP {status if status is not None else 'no response'} {body}".rstrip(),
    ]
    if isinstance(explanation, str) and explanation:
        lines.append(f"Documentation about this error: {explanation}")
    elif explanation:
        lines.extend(explanation)
    if history:
        lines.append("Earlier attempts: " + " | ".join(history[-3:]))
    # no placeholder call here: small models copy ApiName(key=value) verbatim
    lines.append(
        "Thought: explain briefly what went wrong, then write the corrected request as one "
        "<API>...</API> call with a documented API name and documented parameter names."
    )
    return "\n".join(lines)


def observation(status: int, text: str, limit: int) -> str:
    """A response as a ReAct Observation's text: its status and body, cut to ``limit``
    characters.

    >>> observation(200, "x" * 60, 50)
    'HTTP 200 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (10 more characters)'
    """
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return f"HTTP {status} {text}"


def observed(text: str) -> str:
    """The user turn that carries an Observation."""
    return f"Observation: {text}"


def inserted_turn(producer: ApiRequest) -> str:
    """The assistant turn for a call autofeedback sent first (the one producer of a value
    the model's call made up)."""
    return (
        f"Thought: autofeedback calls {producer.name} first: its response gives what the "
        f"next call needs.\nAction: <API>{call_text(producer)}</API>"
    )


def unfinished_note(name: str, sources: Sequence[tuple[str, str]], needed: Sequence[str]) -> str:
    """The note for a Final Answer given before the API that fits the request best
    (``name``) was called, where each identifier it needs (``sources``: the parameter and
    the call whose Observation holds it) is in an Observation already."""
    given = "; ".join(
        f"its `{param}` is in the Observation of {source}" for param, source in sources
    )
    call = ", ".join(f"{p}=..." for p in needed)
    return (
        f"(Not the Final Answer yet: {name} fits the request best and has not "
        f"been called; {given}.) Write this Action next, filling in each ... from "
        f"the Observations: Action: <API>{name}({call})</API> If the "
        "Observations already answer the request, write the Final Answer again."
    )


#: the Observation for a call the model made already (its response is in the conversation)
MADE_AGAIN = (
    "Observation: this call was not sent again: you made it already, and its "
    "response is above. Write the next Action, or the Final Answer if the "
    "Observations answer the request."
)


# -- repeats, stops, calls not run ----------------------------------------------------------


def repeated_request(said: str) -> str:
    """The feedback for a request the model sent again after it failed: what was said."""
    return "You sent the same request again, and it fails for the same reason.\n" + said


def repeated_call(name: Any, repeats: int) -> str:
    """The firm stop for a tool call rejected ``repeats`` times with the same arguments
    (the MCP proxy's)."""
    return (
        f"Stop repeating this call: {name} with these exact arguments has been "
        f"rejected {repeats} times and will be rejected again. Change the call as "
        "the feedback says, or stop and tell the user what is missing."
    )


def mcp_feedback(
    name: Any,
    findings: Sequence[Finding],
    repairs: Sequence[Repair] = (),
    *,
    repeats: int | None = None,
) -> str:
    """The text of an MCP ``isError`` result: the five-part message for a tool call
    (errors first), preceded by the firm stop when ``repeats`` says the run stops."""
    feedback = render_feedback(findings, tool_call=True, repairs=repairs) if findings else ""
    if repeats is None:
        return feedback
    return f"{repeated_call(name, repeats)}\n\n{feedback}"


def unknown_tool(tool: Any, suggestion: str | None) -> str:
    """One line: the JSON-RPC error message for a call to a tool the server does not
    list.

    >>> unknown_tool("get_wether", "get_weather")
    "Unknown tool: 'get_wether'; did you mean 'get_weather'?"
    """
    text = f"Unknown tool: {tool!r}"
    if suggestion:
        text += f"; did you mean {suggestion!r}?"
    return text


#: why a turn of the feedback loop ended the run, in its trace (``Attempt.error``)
REPEATED_REQUEST = "the model repeated a request that failed"
REPEATED_CALL = "the model repeated a call it made"


def not_sent(readable: bool) -> str:
    """Why the feedback loop did not send the model's last request."""
    why = "it still has E1-E3 findings" if readable else "no request could be parsed"
    return f"request not sent: {why}"


#: the answer to a call that was fine but does not run because the run stops (every call
#: of a model message gets an answer: the providers reject a history without one)
NOT_RUN = "Not run: the run stopped (another tool call of this message was rejected)."

#: the answer to a call that was fine, in a message that goes back to the model whole
#: (a gateway runs no tool): the OpenAI-compatible proxy's words
NOT_RUN_WITH = (
    "Not run: another tool call in the same message was rejected. Call this tool "
    "again, together with the corrected call."
)


def gave_up(rounds: int, stop: str, first: Mapping[str, Any]) -> str:
    """The error a client gets for tool calls still invalid when the rounds end."""
    return (
        f"autofeedback: the model's tool calls are still invalid after {rounds} "
        f"round(s) ({stop}): {first.get('code')} {first.get('message')}"
    )


#: the finding for an answer that holds no program
NO_PROGRAM = Finding(
    "E1",
    (),
    "",
    message="the answer holds no program: write the calls, one per line, in a ```python block",
)
