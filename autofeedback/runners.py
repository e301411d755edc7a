"""Task runners: a model that writes a whole program (:class:`ProgramRunner`) or works
step by step in a ReAct dialogue (:class:`ReactRunner`), each call checked and fed back.

>>> from autofeedback.runners import ReactRunner
>>> ReactRunner.__name__
'ReactRunner'
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

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


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "ProgramRunner",
    "ReactRunner",
    "TaskResult",
    "TaskTurn",
]
