"""The OpenAI-compatible proxy's settings (:class:`ProxyConfig`: the upstream, the
bounds, the scanner cache) and the lanes its CPU work runs in (:class:`_Lanes`); see
:mod:`autofeedback.integrations._proxy`."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._cache import content_key
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._redact import redact, url_secrets
from autofeedback.decide import RepairMode, check_repair
from autofeedback.scanner._scan import Scanner

__all__ = ["GIVE_UP", "HEAVY_BYTES", "HEAVY_WAITING", "INLINE_BYTES", "RELAYED", "ProxyConfig"]

GIVE_UP = ("error", "pass")


INLINE_BYTES = 64 << 10


HEAVY_BYTES = 1 << 20


HEAVY_WAITING = 4


_LIGHT_THREADS = 4


RELAYED = 32


T = TypeVar("T")


@dataclass
class ProxyConfig:
    """What the proxy sits in front of and how hard it tries.

    ``upstream``: the OpenAI-compatible base URL (``http://127.0.0.1:8080/v1``);
    ``spec``: a catalog whose operations judge the tools of the same name (HTTP-level
    tools described by an OpenAPI document); ``max_rounds``: requests upstream per
    client request (at least 1); ``token_budget``: stop re-asking once the rounds used
    this many tokens; ``retriever``: ``"auto"`` (the default, as at every entry point)
    for the semantic checks too, ``None`` for the structural ones only; ``log``: a file
    that gets one JSON line per decision (:class:`~autofeedback.integrations._jsonlog.JsonLog`).
    ``repair``: ``"sure"`` hands the agent the
    calls with their certain repairs instead of asking the model again (``"off"``: the
    model fixes everything). ``give_up``: what the agent gets when the model's calls are
    still wrong after the last round: ``"error"``, an HTTP 422 JSON error its client
    raises, or ``"pass"``, the completion as the model wrote it, marked in the
    ``x-autofeedback`` header and the body's ``autofeedback`` field.
    """

    upstream: str
    spec: ApiCatalog | None = None
    max_rounds: int = 3
    token_budget: int | None = None
    timeout: float = 300.0
    retriever: Any = "auto"
    log: Path | None = None
    repair: RepairMode = "sure"
    give_up: str = "error"
    #: request bodies past this many bytes get a 413
    max_body: int = 32 << 20
    #: connections to the upstream at once, and how long a request waits for one
    max_connections: int = 100
    pool_timeout: float = 5.0
    #: the scanner cache's bound, in characters of the tools lists it holds
    cache_bytes: int = 32 << 20
    #: a Unix socket where a worker process answers the heavy checked requests (set by
    #: :func:`run_proxy`; ``None``: they are checked in this process's worker threads)
    heavy_socket: str | None = None
    _scanners: OrderedDict[str, tuple[Scanner, int]] = field(
        default_factory=OrderedDict, repr=False
    )
    _cached: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"--upstream must be an http(s) URL such as http://127.0.0.1:8080/v1, "
                f"got {redact(self.upstream)!r}"
            )
        if self.max_rounds < 1:
            raise ConfigurationError("--max-rounds must be at least 1")
        if self.token_budget is not None and self.token_budget <= 0:
            raise ConfigurationError("--token-budget must be positive")
        if self.log is not None:
            self.log = Path(self.log)
            if not self.log.parent.is_dir():
                raise ConfigurationError(f"--log: no such folder: {self.log.parent}")
        check_repair(self.repair)
        if self.give_up not in GIVE_UP:
            raise ConfigurationError(
                f"--on-give-up must be one of {', '.join(GIVE_UP)}, not {self.give_up!r}"
            )
        if self.max_body < 1 or self.max_connections < 1 or self.pool_timeout <= 0:
            raise ConfigurationError(
                "--max-body-mb, --max-connections and the pool timeout must be positive"
            )
        self.upstream = self.upstream.rstrip("/")

    @property
    def shown_upstream(self) -> str:
        """``upstream`` as the start-up line, the log and error bodies show it: user info
        and credential query values masked.

        >>> ProxyConfig("http://admin:hunter22@127.0.0.1:8080/v1").shown_upstream
        'http://REDACTED@127.0.0.1:8080/v1'
        """
        return str(redact(self.upstream))

    def scrub(self, text: str, *secrets: str | None) -> str:
        """``text`` without the upstream's credentials nor ``secrets`` (a client's key)."""
        found = [s for s in secrets if s] + url_secrets(self.upstream)
        return str(redact(text, secrets=found))

    def scanner(self, tools: Any) -> Scanner:
        """The scanner for one request's ``tools`` (cached: agents resend the same list).

        The cache holds at most :attr:`cache_bytes` characters of tools lists (and 32
        lists); a list larger than that is checked without being kept. Thread-safe."""
        key, size = content_key(tools)
        with self._lock:
            cached = self._scanners.get(key)
            if cached is not None:
                self._scanners.move_to_end(key)
                return cached[0]
        # built-in tools (web_search, file_search, mcp, Anthropic's bash_20250124...) have
        # no schema to check against; Anthropic's own tools may say "type": "custom"
        functions = [
            t
            for t in tools
            if not isinstance(t, Mapping) or t.get("type") in (None, "function", "custom")
        ]
        if not functions:
            raise ConfigurationError("the request has no function tools")
        catalog = ApiCatalog.from_tools(functions)
        if self.spec is not None:
            catalog = ApiCatalog.merge(self.spec, catalog)  # the documented API wins
        scanner = Scanner(catalog, retriever=self.retriever)
        with self._lock:
            if key not in self._scanners and size <= self.cache_bytes:
                self._scanners[key] = (scanner, size)
                self._cached += size
            # eight 30 MB tools lists took the proxy from 56 to 915 MB under a count bound
            while self._scanners and (self._cached > self.cache_bytes or len(self._scanners) > 32):
                _, (_, dropped) = self._scanners.popitem(last=False)
                self._cached -= dropped
        return scanner


class _Lanes:
    """Where a request's CPU work runs: on the event loop when its body is small (it is
    then microseconds to a millisecond), else in a worker thread: a lane of a few threads
    up to :data:`HEAVY_BYTES`, one thread past it, so that heavy requests queue behind
    each other and never in front of light ones. With a retriever, every check runs in
    a thread: the model may load or embed for seconds."""

    def __init__(self, config: ProxyConfig) -> None:
        self.semantic = config.retriever is not None
        self.light = anyio.CapacityLimiter(_LIGHT_THREADS)
        self.heavy = anyio.CapacityLimiter(1)
        self.held = 0  # heavy requests held now, reading or waiting included
        #: the client of the heavy-request worker process, when there is one
        self.worker: httpx.AsyncClient | None = None
        #: where it listens (the file appears once it has started)
        self.worker_socket: str | None = None
        self.relayed = 0  # requests with the worker now

    async def run(self, size: int, fn: Callable[..., T], *args: Any) -> T:
        if size <= INLINE_BYTES and not self.semantic:
            return fn(*args)
        limiter = self.heavy if size > HEAVY_BYTES else self.light
        return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)

    @contextlib.contextmanager
    def admit(self, size: int) -> Iterator[bool]:
        """Whether a request of ``size`` bytes may be held now (a heavy one counts
        against :data:`HEAVY_WAITING` until it is answered)."""
        if size <= HEAVY_BYTES:
            yield True
            return
        if self.held >= HEAVY_WAITING:
            yield False
            return
        self.held += 1
        try:
            yield True
        finally:
            self.held -= 1
