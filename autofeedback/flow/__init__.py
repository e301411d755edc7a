"""Data flow: which operation's response produces each parameter, paths into responses,
sequences of calls and program metrics.

May import ``core``, ``_parse``, ``_specs``, ``catalog`` and ``checks``; never the
``scanner`` (which checks sequences with this folder: ``SequenceChecker`` and
``check_sequence`` live there, public in :mod:`autofeedback.sequences`), ``serve``,
``decide``, ``loop``, ``audit``, ``integrations`` or ``cli``.
"""

import warnings
from typing import Any

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

# sequences, GraphQL-RestBench's program metrics
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
    "Step",
    "StepResponse",
    "argument_differences",
    "score_program",
    "score_programs",
    "sequence_from_chat",
    "sequence_from_program",
    "sequence_from_record",
]

#: names that moved out of this folder, kept working for one release
_MOVED = {"SequenceChecker": "autofeedback.sequences", "check_sequence": "autofeedback.sequences"}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    home = _MOVED[name]
    warnings.warn(
        f"autofeedback.flow.{name} moved to {home}.{name}; the old name goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    # by name, not an import statement: the moved names live above this folder
    return getattr(importlib.import_module(home), name)
