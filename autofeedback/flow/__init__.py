"""Data flow: which operation's response produces each parameter, and paths into responses.

May import the core and ``checks``; never ``loop``, ``audit``, ``integrations`` or ``cli``.
"""

from autofeedback.flow._graph import FlowGraph, Producer, load_overrides, success_response
from autofeedback.flow._graphql import (
    read_response_schemas,
    response_schemas_from_graphql,
    with_responses,
)
from autofeedback.flow._paths import (
    closest_path,
    format_path,
    iter_paths,
    parse_path,
    schema_at,
    schema_types,
)

__all__ = [
    "FlowGraph",
    "Producer",
    "closest_path",
    "format_path",
    "iter_paths",
    "load_overrides",
    "parse_path",
    "read_response_schemas",
    "response_schemas_from_graphql",
    "schema_at",
    "schema_types",
    "success_response",
    "with_responses",
]

# sequences and their data-flow checks (E5), GraphQL-RestBench's program metrics
from autofeedback.flow._checks import SequenceChecker, check_sequence
from autofeedback.flow._metrics import (
    ArgumentDifference,
    ProgramScores,
    argument_differences,
    score_program,
    score_programs,
)
from autofeedback.flow._sequence import (
    Sequence,
    Step,
    StepResponse,
    sequence_from_chat,
    sequence_from_program,
    sequence_from_record,
)

__all__ += [
    "ArgumentDifference",
    "ProgramScores",
    "Sequence",
    "SequenceChecker",
    "Step",
    "StepResponse",
    "argument_differences",
    "check_sequence",
    "score_program",
    "score_programs",
    "sequence_from_chat",
    "sequence_from_program",
    "sequence_from_record",
]
