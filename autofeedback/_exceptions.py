"""Exceptions raised by autofeedback.

Findings about an LLM's request are *values* (:class:`autofeedback.Finding`), never
exceptions. Exceptions are reserved for a bad spec, bad configuration or misuse::

    AutoFeedbackError
    ├── SpecError            a spec file cannot be read or does not describe APIs
    ├── ConfigurationError   a bad option, an unknown backend, a missing optional extra
    ├── HostNotAllowed       a request would leave for an origin the spec does not declare
    ├── RequestFormatError   a structured call/request record is malformed (also a ValueError)
    └── ToolCallRejected     a guarded tool call was rejected (carries the findings)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autofeedback._findings import Finding

__all__ = [
    "AutoFeedbackError",
    "ConfigurationError",
    "HostNotAllowed",
    "SpecError",
    "ToolCallRejected",
]


class AutoFeedbackError(Exception):
    """Root of every exception autofeedback raises on purpose."""


class SpecError(AutoFeedbackError):
    """A spec cannot be loaded.

    ``source`` names the file (or ``"<tools>"`` for in-memory specs) and ``where`` the
    place inside it, as a JSON-pointer-like path (``"paths./pets.get.parameters[0]"``).
    """

    def __init__(self, message: str, *, source: str = "<spec>", where: str = "") -> None:
        self.source = source
        self.where = where
        self.reason = message
        location = f"{source}: {where}" if where else source
        super().__init__(f"{location}: {message}")


class ConfigurationError(AutoFeedbackError):
    """A bad option, unknown backend name, or a missing optional dependency."""


class HostNotAllowed(AutoFeedbackError):
    """A request was about to be sent to an origin (scheme, host, port) that is neither a
    spec server nor allowlisted. ``host`` names that origin (never with user info),
    ``allowed`` the allowed ones."""

    def __init__(self, host: str, allowed: Sequence[str]) -> None:
        self.host = host
        self.allowed = tuple(allowed)
        shown = ", ".join(self.allowed) or "(none)"
        super().__init__(
            f"{host!r} is not a server the spec declares or an allowed host; allowed: {shown}"
        )


class ToolCallRejected(AutoFeedbackError):
    """A guarded tool call had findings; ``feedback`` is the text to hand back to the model."""

    def __init__(self, findings: Sequence[Finding], feedback: str) -> None:
        self.findings = tuple(findings)
        self.feedback = feedback
        first = str(self.findings[0]) if self.findings else "rejected"
        super().__init__(first)
