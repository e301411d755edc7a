"""Task runners: a model that writes a whole program (:class:`ProgramRunner`) or works
step by step in a ReAct dialogue (:class:`ReactRunner`), each call checked and fed back.

>>> from autofeedback.runners import ReactRunner
>>> ReactRunner.__name__
'ReactRunner'
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from autofeedback.loop._program_runner import ProgramRunner
    from autofeedback.loop._react_runner import ReactRunner
    from autofeedback.loop._tasks import TaskResult, TaskTurn

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "ProgramRunner": "autofeedback.loop._program_runner",
    "ReactRunner": "autofeedback.loop._react_runner",
    "TaskResult": "autofeedback.loop._tasks",
    "TaskTurn": "autofeedback.loop._tasks",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ProgramRunner",
    "ReactRunner",
    "TaskResult",
    "TaskTurn",
]
