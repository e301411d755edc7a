"""IBM's Agent Lifecycle Toolkit (ALTK) as a repair peer, run without any LLM: the
adapter ``benchmarks/repair.py`` starts in ALTK's own venv (``python _altk_peers.py IN
OUT [SECONDS]``, SECONDS > 0 bounding each Refraction call). It reads one JSON object per
line and writes one result per line, in order.

Input line::

    {"id": ..., "tools": [OpenAI tool, ...], "calls": [{"name", "arguments", "label"?}],
     "memory": {label: response body}, "peers": ["refraction", "sparc"]}

A tool may carry ``function.output_parameters`` (the JSON Schema of its response), the
field ALTK's catalog reads for data flow; ``arguments`` are an object or the JSON text a
model wrote. A reference to an earlier step's response is ``"$label.field.field$"``
(NESTFUL's form, which ALTK's Refraction reads).

Output line::

    {"id": ..., "refraction": {"calls": [...] | null, "determination": ..., "executable":
     ..., "error": ..., "seconds": ...}, "sparc": {"calls": [...] | null, "decision": ...,
     "error": ..., "seconds": ..., "complete": ..., "llm_calls": 0}}

``calls`` is the peer's repaired sequence when it rewrote the calls, ``null`` when it
let them through or could not repair them.

* **Refraction** (``altk.pre_tool.refraction``): ``refract()``, what
  ``RefractionComponent`` runs in its standalone (no LLM) mode, with the whole catalog
  (``use_given_operators_only=False``: a misspelt name can only be mapped to a real API
  that way). A call is rewritten when its determination is False and the corrected call
  is executable: no step asks the user for a value (``ask(...)``, ``side1="$side1$"``)
  and at least one call is left (an empty sequence is a rejection, nothing to send); the
  component forwards the call as it is when the determination is True. Refraction
  prints every value as text (``side1="5"``); a value it carried over unchanged gets
  its original type back.
* **SPARC** (``altk.pre_tool.sparc``), track ``syntax``: its static checks only (no LLM
  metric). The component requires an LLM client object; it gets one that counts and
  refuses every call, and the count is reported (it must stay 0). A call is rewritten
  when a static issue carries a correction (SPARC drops unknown parameters and converts
  types); ``complete`` is false when another failed check carries none (a required
  parameter missing). A sequence is checked call by call.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

_REF = re.compile(r"^\$[^$]+\$$")


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _printed(value: Any) -> set[str]:
    """The texts Refraction may print for ``value`` (``5``, ``True``/``true``, a list as
    Python or JSON)."""
    forms = {str(value)}
    try:
        forms.add(json.dumps(value))
        forms.add(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        pass
    return forms


def _typed(value: Any, given: dict[str, Any], key: str, used: set[str]) -> Any:
    """The original value behind Refraction's printed ``value``: the same key's, or a
    dropped key's (a renamed parameter keeps its value)."""
    if not isinstance(value, str) or _REF.match(value):
        return value
    if key in given and value in _printed(given[key]):
        used.add(key)
        return given[key]
    for k, v in given.items():
        if k not in used and k != key and value in _printed(v):
            used.add(k)
            return v
    return value


_SLOT = re.compile(r"^\$[^.$]+\$$")


def _asks(calls: list[dict[str, Any]], given: list[dict[str, Any]]) -> bool:
    """Whether a corrected call holds a slot to fill (``side1="$side1$"``: ask the user),
    one the input did not already hold."""
    had = {
        v
        for c in given
        if isinstance(c.get("arguments"), dict)
        for v in c["arguments"].values()
        if isinstance(v, str)
    }
    return any(
        isinstance(v, str) and _SLOT.match(v) and v not in had
        for call in calls
        for v in call["arguments"].values()
    )


class Refraction:
    def __init__(self, timeout: float | None) -> None:
        from altk.pre_tool.refraction.src import refract  # noqa: F401  (fail early)

        self.timeout = timeout

    def run(self, item: dict[str, Any]) -> dict[str, Any]:
        from altk.pre_tool.refraction.src import refract
        from nestful import SequenceStep, SequencingData

        calls = item["calls"]
        steps = [
            SequenceStep(
                name=c["name"],
                arguments=_arguments(c["arguments"])
                if isinstance(_arguments(c["arguments"]), dict)
                else {},
                label=c.get("label"),
            )
            for c in calls
        ]
        start = time.perf_counter()
        out: dict[str, Any] = {"calls": None, "determination": None, "executable": None}
        try:
            result = refract(
                sequence=SequencingData(input=item.get("instruction") or "", output=steps),
                catalog=item["tools"],
                memory_objects=item.get("memory") or {},
                use_given_operators_only=False,
                timeout=self.timeout,
            )
            out["determination"] = result.report.determination
            out["error"] = "timeout" if result.is_timeout else result.error
            if result.report.determination is False and result.backing_data is not None:
                cfc = result.corrected_function_call(
                    item.get("memory") or {}, result.backing_data.catalog
                )
                if cfc is not None:
                    fixed = self._typed(cfc.objectified.output, calls)
                    # no call left is no repair: the agent has nothing to send
                    out["executable"] = (
                        cfc.is_executable and bool(fixed) and not _asks(fixed, calls)
                    )
                    if out["executable"]:
                        out["calls"] = fixed
        except Exception as exc:  # a peer's crash is that record's result
            out["error"] = f"{type(exc).__name__}: {exc}"[:300]
        out["seconds"] = time.perf_counter() - start
        return out

    @staticmethod
    def _typed(steps: list[Any], given: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_label = {c.get("label"): c for c in given if c.get("label")}
        out = []
        for i, step in enumerate(steps):
            if not step.name:
                continue  # a step Refraction deleted prints as an empty line
            source = by_label.get(step.label) or (given[i] if i < len(given) else {})
            args = _arguments(source.get("arguments", {}))
            args = args if isinstance(args, dict) else {}
            used: set[str] = set()
            typed = {k: _typed(v, args, k, used) for k, v in step.arguments.items()}
            out.append({"name": step.name, "arguments": typed, "label": step.label or None})
        return out


class Sparc:
    def __init__(self) -> None:
        from altk.core.llm.output_parser import ValidatingLLMClient
        from altk.core.toolkit import ComponentConfig
        from altk.pre_tool.core import Track
        from altk.pre_tool.sparc.sparc import SPARCReflectionComponent

        counter = self

        class NoLLM(ValidatingLLMClient):
            """Refuses and counts every call: the static track must make none."""

            @classmethod
            def provider_class(cls) -> type:
                return object

            def _register_methods(self) -> None:
                pass

            def _setup_parameter_mapper(self) -> None:
                pass

            def _parse_llm_response(self, raw: Any) -> str:
                raise AssertionError("no LLM here")

            def generate(self, *args: Any, **kwargs: Any) -> Any:
                counter.llm_calls += 1
                raise AssertionError("SPARC's static track called the LLM")

            async def generate_async(self, *args: Any, **kwargs: Any) -> Any:
                counter.llm_calls += 1
                raise AssertionError("SPARC's static track called the LLM")

        self.llm_calls = 0
        self.component = SPARCReflectionComponent(
            config=ComponentConfig(llm_client=NoLLM()), track=Track.SYNTAX
        )

    def run(self, item: dict[str, Any]) -> dict[str, Any]:
        from altk.core.toolkit import AgentPhase
        from altk.pre_tool.core import SPARCReflectionRunInput

        tools = [
            {
                "type": "function",
                "function": {k: v for k, v in t["function"].items() if k != "output_parameters"},
            }
            for t in item["tools"]
        ]
        start = time.perf_counter()
        out: dict[str, Any] = {"calls": None, "decision": [], "error": None, "complete": True}
        changed = False
        calls = []
        try:
            for i, call in enumerate(item["calls"]):
                raw = call["arguments"]
                text = raw if isinstance(raw, str) else json.dumps(raw)
                tool_call = {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": text},
                }
                result = self.component.process(
                    SPARCReflectionRunInput(
                        messages=[{"role": "user", "content": item.get("instruction") or ""}],
                        tool_specs=tools,
                        tool_calls=[tool_call],
                    ),
                    phase=AgentPhase.RUNTIME,
                ).output.reflection_result
                out["decision"].append(str(result.decision.value))
                fixed = next(
                    (
                        issue.correction["tool_call"]["function"]
                        for issue in result.issues
                        if issue.correction and "tool_call" in issue.correction
                    ),
                    None,
                )
                if fixed is not None:
                    changed = True
                    # a failed check with no correction (a missing required parameter,
                    # an unknown function) is still open after the correction
                    out["complete"] &= all(issue.correction for issue in result.issues)
                    calls.append(
                        {
                            "name": fixed["name"],
                            "arguments": _arguments(fixed["arguments"]),
                            "label": call.get("label"),
                        }
                    )
                else:
                    calls.append(dict(call))
            if changed:
                out["calls"] = calls
        except Exception as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"[:300]
        out["seconds"] = time.perf_counter() - start
        out["llm_calls"] = self.llm_calls
        return out


def main(argv: list[str]) -> int:
    source, target = argv[1], argv[2]
    timeout = float(argv[3]) if len(argv) > 3 and float(argv[3]) > 0 else None
    peers: dict[str, Any] = {}
    with open(source, encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as out:
        for line in lines:
            if not line.strip():
                continue
            item = json.loads(line)
            result: dict[str, Any] = {"id": item["id"]}
            for name in item.get("peers", ("refraction", "sparc")):
                if name not in peers:
                    peers[name] = Refraction(timeout) if name == "refraction" else Sparc()
                result[name] = peers[name].run(item)
            out.write(json.dumps(result, default=str) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
