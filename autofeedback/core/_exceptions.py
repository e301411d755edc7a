"""Exceptions raised by autofeedback.

Findings about an LLM's request are *values* (:class:`autofeedback.Finding`), never
exceptions. Exceptions are reserved for a bad spec, bad configuration or misuse::

    AutoFeedbackError
    ├── SpecError            a spec file cannot be read or does not describe APIs
    ├── ConfigurationError   a bad option, an unknown backend, a missing optional extra
    ├── HostNotAllowed       a request would leave for an origin the spec does not declare
    ├── RequestFormatError   a structured call/request record is malformed (also a ValueError)
    └── ToolCallRejected     a guarded tool call was rejected (carries the findings)

Warnings (:mod:`warnings`), for a spec that loads but is probably not what its author
meant::

    UserWarning
    └── SpecWarning          e.g. ``type: integr``: a schema type JSON Schema does not have
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autofeedback.core._findings import Finding

__all__ = [
    "AutoFeedbackError",
    "ConfigurationError",
    "FileNotRead",
    "HostNotAllowed",
    "SpecError",
    "SpecWarning",
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


class SpecWarning(UserWarning):
    """A spec loads, but part of it means nothing to a validator (an unknown schema
    ``type`` such as ``integr``): those values are not checked. Issued once per load."""


class ConfigurationError(AutoFeedbackError):
    """A bad option, unknown backend name, or a missing optional dependency."""


class FileNotRead(AutoFeedbackError):
    """A request was about to be sent with a file part whose content is a file on the
    machine that would run the command (``curl -F photo=@photo.jpg``): autofeedback does
    not read local files, and an empty part is not the upload the model wrote, so the
    request is not sent. ``files`` names the parts."""

    def __init__(self, files: Sequence[str]) -> None:
        self.files = tuple(files)
        names = ", ".join(repr(f) for f in self.files)
        super().__init__(
            f"not sent: the upload of {names} reads a local file, which autofeedback does not "
            "read (an empty part is not the upload written); send it yourself once checked"
        )


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
            + _loopback_hint(host, self.allowed)
        )


_LOOPBACK = ("localhost", "127.0.0.1", "[::1]", "::1")


def _loopback_hint(host: str, allowed: Sequence[str]) -> str:
    """Origins compare by name, so ``localhost`` is not ``127.0.0.1`` (it could resolve
    elsewhere): say so when that is the only difference."""
    from urllib.parse import urlsplit

    def parts(origin: str) -> tuple[str, str | None, int | None] | None:
        try:
            u = urlsplit(origin if "://" in origin else "http://" + origin)
            return u.scheme, u.hostname, u.port
        except ValueError:
            return None

    mine = parts(host)
    if mine is None or mine[1] not in _LOOPBACK:
        return ""
    for other in allowed:
        theirs = parts(other)
        if theirs and theirs[1] in _LOOPBACK and theirs[1] != mine[1] and theirs[2] == mine[2]:
            return (
                f" ({mine[1]} and {theirs[1]} are different origins: use {other}, or allow "
                f"this one with allow_hosts=[{host!r}] / --allow-host {host})"
            )
    return ""


class ToolCallRejected(AutoFeedbackError):
    """A guarded tool call had findings; ``feedback`` is the text to hand back to the model."""

    def __init__(self, findings: Sequence[Finding], feedback: str) -> None:
        self.findings = tuple(findings)
        self.feedback = feedback
        first = str(self.findings[0]) if self.findings else "rejected"
        super().__init__(first)
