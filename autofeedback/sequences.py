"""Sequences of calls and their data flow (E5): a program, a chat or a trace read as
steps, the catalog's data-flow graph, the checker of a whole sequence, paths into
responses, and GraphQL-RestBench's program scores.

>>> from autofeedback import ApiCatalog
>>> from autofeedback.sequences import check_sequence, sequence_from_program
>>> catalog = ApiCatalog.from_tools([{"name": "get", "parameters": {"type": "object",
...     "properties": {"id": {"type": "string"}}}}])
>>> [f.code for f in check_sequence(sequence_from_program("get(id=r.id)"), catalog,
...                                 retriever=None)]
['E5.1']
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

if _TYPE_CHECKING:
    from autofeedback.flow._graph import FlowGraph, Producer
    from autofeedback.flow._graphql import response_schemas_from_graphql, with_responses
    from autofeedback.flow._metrics import ProgramScores, score_programs
    from autofeedback.flow._paths import closest_path, schema_at
    from autofeedback.flow._sequence import (
        Sequence,
        Step,
        StepResponse,
        sequence_from_chat,
        sequence_from_program,
        sequence_from_record,
    )
    from autofeedback.scanner._scan import check_sequence
    from autofeedback.scanner._sequences import SequenceChecker

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "FlowGraph": "autofeedback.flow._graph",
    "Producer": "autofeedback.flow._graph",
    "response_schemas_from_graphql": "autofeedback.flow._graphql",
    "with_responses": "autofeedback.flow._graphql",
    "ProgramScores": "autofeedback.flow._metrics",
    "score_programs": "autofeedback.flow._metrics",
    "closest_path": "autofeedback.flow._paths",
    "schema_at": "autofeedback.flow._paths",
    "Sequence": "autofeedback.flow._sequence",
    "Step": "autofeedback.flow._sequence",
    "StepResponse": "autofeedback.flow._sequence",
    "sequence_from_chat": "autofeedback.flow._sequence",
    "sequence_from_program": "autofeedback.flow._sequence",
    "sequence_from_record": "autofeedback.flow._sequence",
    "check_sequence": "autofeedback.scanner._scan",
    "SequenceChecker": "autofeedback.scanner._sequences",
}


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "FlowGraph",
    "Producer",
    "ProgramScores",
    "Sequence",
    "SequenceChecker",
    "Step",
    "StepResponse",
    "check_sequence",
    "closest_path",
    "response_schemas_from_graphql",
    "schema_at",
    "score_programs",
    "sequence_from_chat",
    "sequence_from_program",
    "sequence_from_record",
    "with_responses",
]
