"""The decisions of ``autofeedback mcp-proxy``, free of any transport: which ``tools/call``
goes through, which is answered with feedback, which is stopped.

:class:`ToolGate` holds the catalog built from the server's ``tools/list`` (schemas
repaired by :func:`~autofeedback.integrations._mcp_schema.check_tool`) and asks the one
decision about each call; the run driver (:class:`~autofeedback.decide._run.Run`) counts
identical rejected calls per conversation and words the answer. The MCP SDK side
(:mod:`autofeedback.integrations._mcp_proxy`) turns a :class:`Decision` into a JSON-RPC
error (unknown tool) or an ``isError`` tool result (bad arguments), as the MCP
specification (2025-11-25, SEP-1303) asks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._tool_names import looks_alike, set_aside
from autofeedback.core._exceptions import SpecError
from autofeedback.core._findings import Finding, Repair
from autofeedback.core._model import ApiRequest
from autofeedback.core._redact import auth_names, redact
from autofeedback.decide import Decider, RepairMode, check_repair
from autofeedback.decide import Decision as OneDecision
from autofeedback.decide._feedback import mcp_feedback, unknown_tool
from autofeedback.decide._run import REPEATED, Run, call_key, key_digest
from autofeedback.integrations._mcp_schema import SchemaIssue, check_tool
from autofeedback.scanner._scan import Scanner

__all__ = ["Action", "Checked", "Decision", "ToolGate"]

Action = Literal["forward", "unknown_tool", "invalid_arguments", "repeated"]
#: A call of more values than this (or to a tool of more parameters) is checked in a
#: worker thread, not on the proxy's event loop.
_LIGHT_VALUES = 200


@dataclasses.dataclass(frozen=True)
class Checked:
    """What :meth:`ToolGate.scan` found for one call: the decision on it and the digest
    of its arguments. Plain data, so a worker process can hand it back."""

    decided: OneDecision
    digest: str


@dataclasses.dataclass(frozen=True)
class Decision:
    """What the proxy does with one ``tools/call``.

    ``action`` is ``forward`` (send it to the server), ``unknown_tool`` (JSON-RPC
    ``-32602``), ``invalid_arguments`` (an ``isError`` result carrying ``feedback``) or
    ``repeated`` (the same rejected call for the ``repeat_limit``-th time: a firm stop).
    ``findings`` are redacted; ``repeats`` counts this exact call's rejections so far.
    """

    action: Action
    tool: str
    findings: tuple[Finding, ...] = ()
    feedback: str = ""
    repeats: int = 0
    unknown: bool = False
    suggestion: str | None = None
    #: what the proxy repaired (a ``forward`` then sends :attr:`call_name` with
    #: :attr:`call_arguments`, not the call as the client wrote it)
    repairs: tuple[Repair, ...] = ()
    call_name: str | None = None
    call_arguments: Mapping[str, Any] | None = None

    @property
    def message(self) -> str:
        """One line: the JSON-RPC error message for an unknown tool."""
        if self.action == REPEATED:
            return self.feedback.splitlines()[0]
        return unknown_tool(self.tool, self.suggestion)

    def as_log(self) -> dict[str, Any]:
        """The JSON-lines form (findings are already redacted)."""
        out = {
            "tool": self.tool,
            "decision": self.action,
            "codes": [f.code for f in self.findings],
            "findings": [f.as_dict() for f in self.findings],
            "repeats": self.repeats,
        }
        if self.repairs:
            out["repairs"] = [r.as_dict() for r in self.repairs]
        return out


class ToolGate:
    """Checks ``tools/call`` requests against the tools a server listed.

    ``retriever`` is the :class:`~autofeedback.Scanner`'s (``"auto"``: the packaged
    embedding model, loaded the first time a name is unknown; ``None``: spelling only).
    ``repeat_limit``: the N-th identical rejected call gets a firm stop (``0``: never).
    ``repair``: ``"sure"`` forwards a call whose every error has a certain repair (a
    parameter spelled another way, ``"3"`` for an integer, a key the tool does not take),
    repaired; ``"off"`` answers it with feedback like any other. The decision itself is
    :mod:`autofeedback.decide`'s, the one every entry point makes.

    >>> gate = ToolGate(retriever=None)
    >>> _ = gate.load([{"name": "get_weather", "inputSchema": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}])
    >>> gate.check("get_weather", {"city": "Paris"}).action
    'forward'
    >>> fixed = gate.check("get_weather", {"City": "Paris"})    # certain: forwarded repaired
    >>> fixed.action, fixed.call_arguments, [str(r) for r in fixed.repairs]
    ('forward', {'city': 'Paris'}, ["E3.2 argument.City: 'City' -> 'city'"])
    >>> gate.check("get_weather", {"town": "Paris"}).action      # not certain: feedback
    'invalid_arguments'
    >>> strict = ToolGate(retriever=None, repair="off")
    >>> _ = strict.load(gate.tools)
    >>> strict.check("get_wether", {"city": "Paris"}).message
    "Unknown tool: 'get_wether'; did you mean 'get_weather'?"
    """

    def __init__(
        self, *, retriever: Any = "auto", repeat_limit: int = 3, repair: RepairMode = "sure"
    ) -> None:
        if repeat_limit < 0:
            raise ValueError("repeat_limit must be 0 (off) or more")
        self.retriever = retriever
        self.repeat_limit = repeat_limit
        self.repair = check_repair(repair)
        # every conversation's repeats, in one run of the driver: the N-th identical
        # rejected call of a conversation stops (answered with feedback until then)
        self._run = Run.gate(repeat_limit, repair=repair)
        self.tools: list[dict[str, Any]] = []
        self.issues: list[SchemaIssue] = []
        self.unchecked: frozenset[str] = frozenset()
        #: listed tool names never matched to a call, with why
        #: (:mod:`autofeedback.catalog._tool_names`)
        self.set_aside: dict[str, str] = {}
        self.catalog: ApiCatalog | None = None
        self._scanner: Scanner | None = None
        self._decider: Decider | None = None
        self._names: frozenset[str] = frozenset()
        # the proxy checks calls on its event loop and in worker threads at once: the
        # lock guards a reload and the repeat counts, never a scan (an inline check
        # waiting on a heavy one's lock stalled the event loop; the retriever locks its
        # own lazy load)
        self._lock = threading.Lock()

    def load(self, tools: Sequence[Mapping[str, Any]]) -> list[SchemaIssue]:
        """Take a fresh ``tools/list``: repair the schemas, rebuild the catalog; returns
        the schema issues found (also kept in :attr:`issues`)."""
        with self._lock:
            return self._load(tools)

    def _load(self, tools: Sequence[Mapping[str, Any]]) -> list[SchemaIssue]:
        fixed: list[dict[str, Any]] = []
        issues: list[SchemaIssue] = []
        catalogs: list[ApiCatalog] = []
        unchecked: set[str] = set()
        # a name that looks like another (mixed scripts, an invisible character) or is
        # listed twice is never matched to a call: said now, and a call to it is fed back
        aside = set_aside(
            {  # one name per distinct definition: a tool listed twice as itself is one tool
                _digest(t): t["name"]
                for t in tools
                if isinstance(t, Mapping) and isinstance(t.get("name"), str)
            }.values()
        )
        said: set[str] = set()
        for tool in tools:
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                issues.append(SchemaIssue("?", "name", "a tool without a name", "dropped"))
                continue
            repaired, found = check_tool(tool)
            issues.extend(found)
            fixed.append(repaired)
            if repaired["name"] in aside:
                if repaired["name"] not in said:  # once per name, not per listing of it
                    said.add(repaired["name"])
                    issues.append(
                        SchemaIssue(
                            repaired["name"],
                            "name",
                            f"the name {aside[repaired['name']]}",
                            "never matched to a call: a call naming it is answered with feedback",
                        )
                    )
                continue
            if any("unchecked" in i.fix for i in found):
                unchecked.add(repaired["name"])
                continue
            try:  # one tool's schema the loader cannot read costs only that tool its checks
                catalogs.append(ApiCatalog.from_tools([repaired], source="<mcp tools/list>"))
            except SpecError as exc:
                unchecked.add(repaired["name"])
                issues.append(
                    SchemaIssue(
                        repaired["name"], "inputSchema", str(exc), "calls forwarded unchecked"
                    )
                )
        catalog = ApiCatalog.merge(*catalogs) if catalogs else None
        if catalog is not None and aside:
            catalog = ApiCatalog(
                catalog.operations, servers=catalog.servers, source=catalog.source, set_aside=aside
            )
        scanner = Scanner(catalog, retriever=self.retriever) if catalog is not None else None
        decider = Decider(scanner, repair=self.repair) if scanner is not None else None
        # everything built first, then swapped in together: a check running meanwhile
        # sees the old listing or the new one
        self.tools, self.issues, self.unchecked = fixed, issues, frozenset(unchecked)
        self.set_aside = aside
        self._names = frozenset(t["name"] for t in fixed)
        self.catalog, self._scanner, self._decider = catalog, scanner, decider
        return issues

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def needs_model(self, name: str, arguments: Mapping[str, Any] | None) -> bool:
        """Whether checking this call may use the embedding model (an unknown tool or
        argument name, with a retriever configured): the proxy then checks it off the
        event loop.

        >>> ToolGate(retriever=None).needs_model("anything", {})
        False
        """
        if self.retriever is None or name in self.unchecked:
            return False
        op = self.catalog.get(name) if self.catalog is not None else None
        if op is None:
            return True
        return any(op.parameter(str(key)) is None for key in arguments or {})

    def is_heavy(self, name: str, arguments: Mapping[str, Any] | None) -> bool:
        """Whether checking this call costs more than a hop to a worker thread: a tool
        of many parameters, or arguments of many values (counted up to the bound), or a
        catalog with a pattern RE2 cannot run (its bounded matcher may take its whole
        time bound, which must not stall the event loop).

        >>> ToolGate(retriever=None).is_heavy("anything", {"a": 1})
        False
        """
        op = self.catalog.get(name) if self.catalog is not None else None
        if op is not None and len(op.parameters) > _LIGHT_VALUES:
            return True
        if self.catalog is not None and self.catalog.bounded_patterns:
            return True
        budget = _LIGHT_VALUES
        stack: list[Any] = [arguments]
        while stack:
            value = stack.pop()
            budget -= 1 + (len(value) // 256 if isinstance(value, str) else 0)
            if budget < 0:
                return True
            if isinstance(value, Mapping):
                stack.extend(value.values())
            elif isinstance(value, (list, tuple)):
                stack.extend(value)
        return False

    def redact(self, value: Any) -> Any:
        """``value`` with credentials masked, the listed tools' credential names included."""
        names = auth_names(self.catalog) if self.catalog is not None else ()
        return redact(value, names=names)

    def check(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        conversation: Hashable = None,
        checked: Checked | None = None,
    ) -> Decision:
        """The decision for one ``tools/call`` of ``conversation`` (a client session).
        Thread-safe: calls are checked concurrently, the repeat counts under a lock.

        ``checked``: what :meth:`scan` gave for this call elsewhere (the proxy's worker
        process, for a heavy call); what is left here is the repeat count and the
        feedback's wording, microseconds."""
        args = dict(arguments or {})
        if name in self.unchecked:
            return Decision("forward", name)
        if checked is None:
            checked = self.scan(name, args)
        return self._judge(name, args, checked, conversation)

    def scan(self, name: str, arguments: Mapping[str, Any] | None) -> Checked:
        """The costly part of :meth:`check`, with no state of its own but the listing:
        the one decision on the call (:mod:`autofeedback.decide`) and the digest its
        repeats are counted by. A worker process with the same listing gives the same."""
        args = dict(arguments or {})
        if name in self.set_aside:
            # answered here, whatever the catalog holds: no checkable tool may be left
            aside = Finding(
                "E2",
                ("api",),
                name,
                message=f"API {name!a} is not called: its name {self.set_aside[name]}; "
                "tell the user instead of calling it",
            )
            decided = OneDecision("feedback", "errors", None, None, (aside,), (aside,))
        elif self._decider is not None:
            request = ApiRequest(name=name, arguments=args, format="openai")
            decided = self._decider.decide_request(request)
        else:
            alike = [n for n in self.set_aside if looks_alike(name, n)]
            hint = (
                f" ({alike[0]!a} is listed, but never called: its name {self.set_aside[alike[0]]})"
                if alike
                else ""
            )
            missing = Finding(
                "E2",
                ("api",),
                name,
                message=f"API {name!r} does not exist; the server lists no checkable tools{hint}",
            )
            decided = OneDecision("feedback", "errors", None, None, (missing,), (missing,))
        return Checked(decided, key_digest(call_key(ApiRequest(name=name, arguments=args))))

    def _judge(
        self, name: str, args: Mapping[str, Any], checked: Checked, conversation: Hashable
    ) -> Decision:
        decided = checked.decided
        unknown = name not in self._names
        called = decided.request
        if (
            decided.action == "forward"
            and called is not None
            and called.name in self._names
            and called.name not in self.set_aside
        ):
            repaired = bool(decided.repairs)
            return Decision(
                "forward",
                name,
                decided.findings,
                unknown=unknown,
                repairs=decided.repairs,
                call_name=called.name if repaired else None,
                call_arguments=dict(called.arguments) if repaired else None,
            )
        findings = list(decided.remaining if decided.errors else decided.findings)
        errors = [f for f in findings if f.severity == "error"]
        ordered = errors + [f for f in findings if f.severity != "error"]
        suggestion = next((f.suggestion for f in ordered if f.code.startswith("E2")), None)
        if unknown and suggestion is None:
            suggestion = next(
                (
                    f.expected
                    for f in ordered
                    if f.code.startswith("E2") and isinstance(f.expected, str) and f.expected
                ),
                None,
            )
        key = (conversation, checked.digest)
        with self._lock:  # the repeat counts of every conversation, in one run
            _, repeats, firm = self._run.call_turn(decided, key)
        # an MCP tools/call: worded as a tool call (issue 28), as through the OpenAI proxy
        if firm:
            feedback = mcp_feedback(name, ordered, decided.repairs, repeats=repeats)
            action: Action = REPEATED
        else:
            feedback = mcp_feedback(name, ordered, decided.repairs)
            action = "unknown_tool" if unknown else "invalid_arguments"
        return Decision(
            action, name, tuple(ordered), feedback, repeats, unknown, suggestion, decided.repairs
        )


def _digest(args: Mapping[str, Any]) -> str:
    """A tool definition's identity (a tool listed twice as itself is one tool): a
    digest of its canonical JSON."""
    try:
        text = json.dumps(args, sort_keys=True, default=repr)
    except ValueError:  # circular or otherwise unserialisable: compared by repr
        text = repr(args)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
