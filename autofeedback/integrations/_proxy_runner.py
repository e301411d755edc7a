"""``autofeedback proxy``: the proxy served by uvicorn, with a worker process for heavy
requests at a lower CPU priority; see :mod:`autofeedback.integrations._proxy`."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._install import install_hint
from autofeedback.decide import RepairMode
from autofeedback.integrations._proxy import create_proxy_app
from autofeedback.integrations._proxy_config import ProxyConfig
from autofeedback.serve._listen import listen
from autofeedback.serve._serve import DEFAULT_GRACE, check_host, uvicorn_server

__all__ = ["run_proxy"]


def run_proxy(
    upstream: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8787,
    spec: str | None = None,
    max_rounds: int = 3,
    token_budget: int | None = None,
    semantic: bool = True,
    log: str | Path | None = None,
    repair: RepairMode = "sure",
    give_up: str = "error",
    allow_remote: bool = False,
    max_body: int = 32 << 20,
    max_connections: int = 100,
    grace: float = DEFAULT_GRACE,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Serve the proxy until interrupted (``autofeedback proxy``); 2 on bad configuration
    or a port that cannot be bound (in use, or not this machine's address).

    >>> run_proxy("not a url", stdout=sys.stdout, stderr=sys.stderr)  # doctest: +SKIP
    2
    """
    try:
        import uvicorn  # noqa: F401
    except ImportError:  # pragma: no cover - the proxy extra is missing
        stderr.write(
            "autofeedback: error: the proxy needs uvicorn, starlette and httpx: "
            f"{install_hint('proxy')}\n"
        )
        return 2
    try:
        warning = check_host(host, allow_remote, "the proxy")
        catalog = ApiCatalog.from_file(spec) if spec else None
        config = ProxyConfig(
            upstream,
            spec=catalog,
            max_rounds=max_rounds,
            token_budget=token_budget,
            retriever="auto" if semantic else None,
            log=Path(log) if log is not None else None,
            repair=repair,
            give_up=give_up,
            max_body=max_body,
            max_connections=max_connections,
        )
        # bound before saying where it serves: a port in use is one error line, exit 2
        sock = listen(host, port)
    except AutoFeedbackError as exc:
        stderr.write(f"autofeedback: error: {exc}\n")
        return 2
    if warning:
        stderr.write(f"autofeedback: {warning}\n")
        stderr.flush()
    settings = {
        "upstream": upstream,
        "spec": spec,
        "max_rounds": max_rounds,
        "token_budget": token_budget,
        "semantic": semantic,
        "log": str(log) if log is not None else None,
        "repair": repair,
        "give_up": give_up,
        "max_body": max_body,
        "grace": grace,
    }
    with _heavy_worker(settings, stderr) as socket_path:
        config.heavy_socket = socket_path
        shown = f"[{host}]" if ":" in host else host
        stdout.write(
            f"autofeedback proxy on http://{shown}:{port}/v1 -> {config.shown_upstream} "
            f"(max {config.max_rounds} rounds)\n"
        )
        stdout.flush()
        try:
            uvicorn_server(create_proxy_app(config), host, port, grace=grace).run(sockets=[sock])
        finally:
            sock.close()
    return 0


@contextlib.contextmanager
def _heavy_worker(settings: dict[str, Any], stderr: IO[str]) -> Iterator[str | None]:
    """Start the heavy-request worker (:func:`_worker_main`) on a Unix socket in a private
    folder; yields the socket's path, or ``None`` when it did not start (the heavy
    requests are then checked in this process). The worker reads its settings from its
    stdin (the upstream URL may hold credentials: never on a command line) and ends when
    that pipe closes, so it never outlives this process, even one killed by a signal."""
    import shutil
    import socket
    import subprocess
    import tempfile

    if not hasattr(socket, "AF_UNIX"):  # no Unix sockets here: threads only
        yield None
        return
    folder = tempfile.mkdtemp(prefix="autofeedback-proxy-")  # 0700: only its owner
    path = os.path.join(folder, "heavy.sock")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.integrations._proxy_runner import _worker_main; "
         "_worker_main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps({**settings, "socket": path, "folder": folder}) + "\n")
        proc.stdin.flush()
        # not waited for: the proxy serves at once (the worker's start-up, a second or more
        # of imports, made the proxy's own ready time twice as long); a heavy request
        # that comes before the worker's socket exists is checked here
        yield path
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()  # the worker's signal to stop
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _worker_main() -> None:
    """The heavy-request worker: the proxy app on the Unix socket its parent names, at a
    lower CPU priority, ending when its parent closes (or loses) the settings pipe."""
    import shutil

    settings = json.loads(sys.stdin.readline())

    def parent_watch() -> None:
        sys.stdin.read()  # returns at EOF: the parent stopped or died
        shutil.rmtree(settings["folder"], ignore_errors=True)
        os._exit(0)

    threading.Thread(target=parent_watch, daemon=True).start()
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(10)  # light requests, in the parent, come first
    config = ProxyConfig(
        settings["upstream"],
        spec=ApiCatalog.from_file(settings["spec"]) if settings["spec"] else None,
        max_rounds=settings["max_rounds"],
        token_budget=settings["token_budget"],
        retriever="auto" if settings["semantic"] else None,
        log=Path(settings["log"]) if settings["log"] else None,
        repair=settings["repair"],
        give_up=settings["give_up"],
        max_body=settings["max_body"],
    )
    server = uvicorn_server(
        create_proxy_app(config), "127.0.0.1", 0, grace=settings["grace"], uds=settings["socket"]
    )
    server.run()
