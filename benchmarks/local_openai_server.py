"""An OpenAI-compatible chat server for the local GGUF model, with native tool calls: the
upstream of ``benchmarks/proxy.py``'s paired tasks (an LLM server, outside the product).

llama-cpp-python's own server gives a Qwen model tools only through its generic
``chatml-function-calling`` format. That format lists the tools inside the system message
(none at all when the client sends no system message) and never renders a ``tool``
message, so a model behind it cannot see a tool result, the proxy's feedback included.
This server does what llama.cpp's ``llama-server --jinja`` does instead: the model's own
chat template (read from the GGUF) renders ``tools``, the assistant's ``tool_calls`` and
the ``tool`` results, and the ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
blocks of the answer come back as ``message.tool_calls``, and so does an answer that is
nothing but such a call as JSON (Qwen2.5-Coder writes a fenced ``{"name": ...,
"arguments": {...}}`` as often as a ``<tool_call>`` block). Greedy, one request at a time,
on 127.0.0.1.

    python benchmarks/local_openai_server.py --model 1.5b --port 8080
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jinja2.sandbox import ImmutableSandboxedEnvironment
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_STOP = ["<|im_end|>", "<|endoftext|>"]


class LocalChat:
    """The local model behind ``/v1/chat/completions``, rendered by its own template."""

    def __init__(self, model: str = "1.5b", n_ctx: int = 8192) -> None:
        from llama_cpp import Llama

        from autofeedback.loop._local_models import ensure_local_model

        path = ensure_local_model(model)
        self.name = path.stem
        self.llama = Llama(model_path=str(path), n_ctx=n_ctx, verbose=False, seed=0)
        source = self.llama.metadata.get("tokenizer.chat_template")
        if not source:
            raise SystemExit(f"{path.name} has no chat template in its metadata")
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        self.template = env.from_string(source)
        self.lock = threading.Lock()
        self.calls = 0

    def render(self, messages: list[Mapping[str, Any]], tools: list[Any] | None) -> str:
        shown = []
        for m in messages:
            m = dict(m)
            if m.get("content") is None:
                m["content"] = ""
            calls = []
            for call in m.get("tool_calls") or []:
                function = dict(call.get("function") or {})
                # the template writes arguments with tojson: an object, not its JSON text
                if isinstance(function.get("arguments"), str):
                    with contextlib.suppress(ValueError):
                        function["arguments"] = json.loads(function["arguments"])
                calls.append({**call, "function": function})
            if calls:
                m["tool_calls"] = calls
            shown.append(m)
        return str(self.template.render(messages=shown, tools=tools, add_generation_prompt=True))

    def complete(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        prompt = self.render(list(payload.get("messages") or []), payload.get("tools") or None)
        with self.lock:
            out = self.llama.create_completion(
                prompt,
                max_tokens=int(payload.get("max_tokens") or 512),
                temperature=0.0,
                stop=_STOP,
            )
            self.calls += 1
        assert isinstance(out, dict)
        text = out["choices"][0]["text"]
        calls = []
        blocks = _TOOL_CALL.findall(text)
        fenced = _bare_call(text) if not blocks else None
        if fenced is not None:
            blocks = [fenced]
        for i, block in enumerate(blocks):
            try:
                call = json.loads(block)
            except ValueError:
                continue  # not JSON: left in the text, where the client can see it
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                continue
            arguments = call.get("arguments", {})
            calls.append(
                {
                    "id": f"call_{self.calls}_{i}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments, ensure_ascii=False),
                    },
                }
            )
        if fenced is not None and calls:
            content = ""
        else:
            content = _TOOL_CALL.sub("", text).strip() if calls else text.strip()
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        usage = out.get("usage") or {}
        return {
            "id": f"chatcmpl-local-{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage.get("prompt_tokens", 0),
                "completion_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
            },
        }


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _bare_call(text: str) -> str | None:
    """A whole answer that is one ``{"name": ..., "arguments": {...}}`` object, fenced or
    not: Qwen2.5-Coder's way of calling a tool as often as ``<tool_call>``."""
    match = _FENCE.match(text)
    body = (match.group(1) if match else text).strip()
    try:
        call = json.loads(body)
    except ValueError:
        return None
    if (
        isinstance(call, dict)
        and isinstance(call.get("name"), str)
        and isinstance(call.get("arguments"), dict)
    ):
        return body
    return None


def create_app(chat: LocalChat) -> Starlette:
    async def completions(request: Request) -> JSONResponse:
        try:
            payload = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"error": {"message": "the body is not JSON"}}, 400)
        if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
            return JSONResponse({"error": {"message": "messages must be a list"}}, 400)
        if payload.get("stream"):
            return JSONResponse({"error": {"message": "stream is not served here"}}, 400)
        from starlette.concurrency import run_in_threadpool

        return JSONResponse(await run_in_threadpool(chat.complete, payload))

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": chat.name, "object": "model"}]})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="1.5b", help="a local model: 1.5b or 0.5b")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    uvicorn.run(create_app(LocalChat(args.model)), host="127.0.0.1", port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
