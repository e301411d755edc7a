"""The loop answers a native tool call in kind: a model that called a tool through its
provider's API (here an Anthropic ``tool_use`` block, and a Gemini ``functionCall``) gets
feedback about its tool call and a correction as a JSON call, never the ``<API>`` form.
The scripted LLM is the one test double; the sandbox is real, on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.loop._llm import CallableLLM, Usage
from autofeedback.loop._loop import FeedbackLoop
from autofeedback.serve._sandbox import Sandbox

GOOD = "<API>searchBooks(query='science', genre='science', published_after='2020-01-01')</API>"
NATIVE = {
    "anthropic": {
        "type": "message",
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "search_books",
                "input": {"query": "science"},
            },
        ],
    },
    "gemini": {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"functionCall": {"name": "search_books", "args": {"query": "science"}}}
                    ],
                }
            }
        ]
    },
}


@pytest.mark.parametrize("shape", sorted(NATIVE))
def test_native_tool_call_feedback_speaks_its_shape(
    shape: str, bookshop: ApiCatalog, terse_bookshop: Sandbox
) -> None:
    outputs = [json.dumps(NATIVE[shape]), GOOD]
    seen: list[Any] = []

    def llm(messages: list[dict[str, str]]) -> tuple[str, Usage]:
        seen.append(messages)
        return outputs.pop(0), Usage(prompt_tokens=1, completion_tokens=1)

    loop = FeedbackLoop(
        CallableLLM(llm),
        bookshop,
        base_url=terse_bookshop.url,
        max_static=1,
        skeleton=True,
        repair="off",
    )
    result = loop.run("Find science books")
    first = result.attempts[0]
    assert first.request is not None and first.request.shape == shape
    assert first.findings[0].code == "E2.2"
    feedback = first.feedback or ""
    assert feedback.startswith("There is an error in your tool call.")
    assert "<API>" not in feedback and "regenerate the API request" not in feedback
    assert '"name": "searchBooks"' in feedback  # the correction, as a JSON call
    assert feedback.endswith("Please call the tool again with the corrected arguments.")
    assert result.success
