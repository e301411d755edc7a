"""The ``autofeedback flow`` view: each parameter of an operation with its ranked
producers, as text for a person or JSON for a program."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO

from autofeedback.flow._graph import FlowGraph

__all__ = ["JsonFlowView", "TextFlowView"]


class TextFlowView:
    """One block per operation::

    GET_person-person_id  GET /person/{person_id}
      person_id (required, path)
        1. GET_search-person -> results[].id  [resource 0.70]
    """

    def __init__(self, out: IO[str], top: int = 3) -> None:
        self.out = out
        self.top = top

    def show(self, graph: FlowGraph, operations: Sequence[str]) -> None:
        for name in operations:
            op = graph.operation(name)
            if op is None:
                continue
            where = f"  {op.method} {op.path}" if op.is_http else ""
            self.out.write(f"{op.name}{where}\n")
            if not op.parameters:
                self.out.write("  (no parameters)\n")
            for p in op.parameters:
                flags = ", ".join(x for x in ("required" if p.required else "", p.location) if x)
                self.out.write(f"  {p.name} ({flags})\n")
                found = graph.producers(op.name, p.name)
                if graph.user_supplied(op.name, p.name):
                    self.out.write("    the user supplies it (override)\n")
                elif not found:
                    self.out.write("    no producer: a value from the user or the instruction\n")
                for i, prod in enumerate(found[: self.top], 1):
                    self.out.write(
                        f"    {i}. {prod.operation} -> {prod.path}  [{prod.via} {prod.score:.2f}]\n"
                    )
            self.out.write("\n")


class JsonFlowView:
    """``{operation: {parameter: {"required", "user_supplied", "producers": [...]}}}``."""

    def __init__(self, out: IO[str], top: int = 3) -> None:
        self.out = out
        self.top = top

    def show(self, graph: FlowGraph, operations: Sequence[str]) -> None:
        data = graph.as_dict(operations)
        for params in data.values():
            for entry in params.values():
                entry["producers"] = entry["producers"][: self.top]
        json.dump(data, self.out, indent=2)
        self.out.write("\n")
