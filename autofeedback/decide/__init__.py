"""The decision: what happens to a call the model wrote (forward, repair, feed back,
stop), one component behind every entry point.

May import ``core``, ``_parse``, ``_specs``, ``catalog``, ``checks``, ``flow`` and the
``scanner``; never ``serve``, ``loop``, ``audit``, ``integrations`` or ``cli``.
"""

from autofeedback.decide._coerce import NOT_COERCIBLE, coerce
from autofeedback.decide._decision import (
    REPAIR_MODES,
    Decider,
    Decision,
    Policy,
    RepairMode,
    Session,
    check_repair,
    combine,
    request_key,
    with_fixes,
)

__all__ = [
    "NOT_COERCIBLE",
    "REPAIR_MODES",
    "Decider",
    "Decision",
    "Policy",
    "RepairMode",
    "Session",
    "check_repair",
    "coerce",
    "combine",
    "request_key",
    "with_fixes",
]
