"""What the agent-framework adapter tests share: the tool, the scripted turns and the
checks of issue 37's scenario (a misspelt call and a made-up tool name: the tool runs
once with the repaired arguments, the made-up name is answered with feedback, the run
goes on, nothing raises)."""

from __future__ import annotations

from typing import Any

#: the one tool every scripted agent has, in OpenAI's shape
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
#: the model's first turn: ``City`` for ``city`` (the same word: repaired) and a tool
#: nobody defined (fed back)
MISSPELT = ("c1", "get_weather", {"City": "Paris"})
MADE_UP = ("c2", "book_flight", {"to": "Rome"})
#: the model's last turn
ANSWER = "Paris is sunny; I cannot book flights."


def assert_fed_back(text: str) -> None:
    """``text`` is autofeedback's feedback on the made-up tool name."""
    assert text.startswith("There is an error in your tool call."), text
    assert "Error E2" in text and "'book_flight'" in text, text
