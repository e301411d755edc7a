"""The proxy in front of a real model server: llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server``, chat format ``chatml-function-calling`` so that it
answers with ``tool_calls``) running the embedded 0.5B model, the ``openai`` client as
the agent. Slow: skipped unless the server and the model are installed.

``AUTOFEEDBACK_LLAMA_PYTHON`` names an interpreter that has ``llama-cpp-python[server]``
when it is not this one (the server runs in its own process either way).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the proxy extra (uvicorn, starlette, httpx) is missing")
openai = pytest.importorskip("openai", reason="the openai client is the agent in this test")

import uvicorn  # noqa: E402
from _support.ports import free_port  # noqa: E402

from autofeedback import ConfigurationError  # noqa: E402
from autofeedback.integrations._proxy import create_proxy_app  # noqa: E402
from autofeedback.integrations._proxy_config import ProxyConfig  # noqa: E402
from autofeedback.loop._local_models import ensure_local_model  # noqa: E402

pytestmark = pytest.mark.slow

LLAMA_PYTHON = os.environ.get("AUTOFEEDBACK_LLAMA_PYTHON", sys.executable)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Paris"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
            },
        },
    }
]


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    probe = subprocess.run(
        [LLAMA_PYTHON, "-c", "import llama_cpp.server"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(
            "llama-cpp-python's server is not installed (pip install 'autofeedback-api[local]' "
            "'llama-cpp-python[server]', or set AUTOFEEDBACK_LLAMA_PYTHON)"
        )
    try:
        model = ensure_local_model("0.5b")
    except ConfigurationError as exc:
        pytest.skip(f"the local model is not installed: {exc}")
    port = free_port()
    server = subprocess.Popen(
        [
            LLAMA_PYTHON,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--chat_format",
            "chatml-function-calling",
            "--n_threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(30)


def test_proxy_in_front_of_llama_cpp_server(llama_server: str) -> None:
    port = free_port()
    config = uvicorn.Config(
        create_proxy_app(ProxyConfig(llama_server, max_rounds=3, give_up="pass")),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws="none",
    )
    proxy = uvicorn.Server(config)
    thread = threading.Thread(target=proxy.run, daemon=True)
    thread.start()
    while not proxy.started:
        time.sleep(0.01)
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-local", max_retries=0, timeout=600
    )
    try:
        assert [m.id for m in client.models.list()]  # passed through to llama.cpp
        raw = client.chat.completions.with_raw_response.create(
            model="local",
            messages=[{"role": "user", "content": "What is the weather in Paris in celsius?"}],
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
            max_tokens=128,
            temperature=0,
        )
    finally:
        client.close()
        proxy.should_exit = True
        thread.join(30)
    header: dict[str, Any] = json.loads(raw.headers["x-autofeedback"])
    completion = raw.parse()
    assert header["rounds"] >= 1 and header["stop"] in (
        "clean",
        "repaired",
        "corrected",
        "max-rounds",
        "repeated",
    )
    assert completion.model_extra["autofeedback"]["rounds"] == header["rounds"]
    assert completion.usage.total_tokens > 0
    [call] = completion.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    if header["stop"] in ("clean", "repaired", "corrected"):
        arguments = json.loads(call.function.arguments)
        assert set(arguments) <= {"city", "unit"} and "city" in arguments
