"""An LLM client that replays recorded outputs, one per call: for demos, for re-running
a logged session through the loop, and for checking a feedback policy offline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from autofeedback.core._exceptions import ConfigurationError

__all__ = ["ReplayLLM"]

SEPARATOR = "---"


class ReplayLLM:
    """Replies with the next recorded output. A file holds outputs separated by lines
    that are exactly ``---``.

    >>> llm = ReplayLLM(["<API>ping()</API>"])
    >>> llm.complete([{"role": "user", "content": "hi"}])
    '<API>ping()</API>'
    """

    def __init__(self, outputs: Sequence[str]) -> None:
        self.outputs = list(outputs)
        self.calls = 0
        self.last_usage = None

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayLLM:
        text = Path(path).read_text(encoding="utf-8")
        parts: list[list[str]] = [[]]
        for line in text.splitlines():
            if line.strip() == SEPARATOR:
                parts.append([])
            else:
                parts[-1].append(line)
        outputs = ["\n".join(p).strip() for p in parts if "\n".join(p).strip()]
        if not outputs:
            raise ConfigurationError(f"{path}: no recorded outputs")
        return cls(outputs)

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        if self.calls >= len(self.outputs):
            raise ConfigurationError(
                f"the replay has {len(self.outputs)} outputs and the loop asked for more"
            )
        self.calls += 1
        return self.outputs[self.calls - 1]
