"""The sandbox under real traffic (issue 29): slow clients that would hold every slot,
huge query strings in what it records, the host rule, and SIGTERM with answers in
flight. A real server on 127.0.0.1, real sockets, the real ``autofeedback sandbox``."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
import requests

from autofeedback import ApiCatalog, ConfigurationError
from autofeedback.cli import run as cli_run
from autofeedback.serve._sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"


def test_slow_clients_cannot_hold_every_slot(bookshop: ApiCatalog) -> None:
    """Clients that send a byte every few seconds (slowloris) held every slot:
    each read was within the socket timeout, the request never ended. Six of them for
    four slots: the next client is answered while they all still send, because the
    sandbox hung up on some of them (a request must arrive whole within
    ``request_timeout``); without that bound it would never be answered."""
    stop = threading.Event()
    slow: list[socket.socket] = []
    dropped: list[socket.socket] = []

    def dribble(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            # one header that never ends, a byte at a time: no read waits long, and no
            # limit on header count or line length is reached for hours
            sock.sendall(b"GET /books?query=dune HTTP/1.1\r\nX-Slow: ")
            while not stop.wait(0.3):
                if select.select([sock], [], [], 0)[0]:  # an answer (408) or a close
                    dropped.append(sock)
                    return
                sock.sendall(b"1")
        dropped.append(sock)  # the send failed: the sandbox closed the connection

    with Sandbox(bookshop, max_connections=4, request_timeout=1.5) as sandbox:
        threads = []
        for _ in range(6):  # more than the slots; accepted in this order, before the next
            sock = socket.create_connection(("127.0.0.1", sandbox.port), timeout=10)
            slow.append(sock)
            threads.append(threading.Thread(target=dribble, args=(sock,), daemon=True))
            threads[-1].start()
        try:
            # 60 s ends a hang only (the slow clients would hold their slots for hours)
            answer = requests.get(sandbox.url + "/books", params={"query": "x"}, timeout=60)
            assert answer.status_code == 200
            assert not stop.is_set()  # answered while the slow clients kept sending
            deadline = time.monotonic() + 60  # ends a hang only: no bound on the sandbox
            while len(dropped) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(dropped) >= 3  # hung up on: at least the three ahead of it in line
        finally:
            stop.set()
            for sock in slow:
                sock.close()


def test_what_the_sandbox_records_of_a_huge_query_is_bounded(bookshop: ApiCatalog) -> None:
    log = StringIO()
    with Sandbox(bookshop, log=log) as sandbox:
        query = "dune" + "x" * 60_000
        answer = requests.get(sandbox.url + "/books", params={"query": query}, timeout=30)
        assert answer.status_code == 200
        seen = sandbox.requests_seen[-1]
    assert len(seen.query) < 1_200, len(seen.query)
    assert seen.query.endswith("characters)")
    assert len(log.getvalue()) < 1_300


def test_a_non_loopback_host_needs_allow_remote(bookshop: ApiCatalog) -> None:
    with pytest.raises(ConfigurationError, match="--allow-remote"):
        Sandbox(bookshop, host="0.0.0.0")
    sandbox = Sandbox(bookshop, host="0.0.0.0", allow_remote=True)
    assert sandbox.warning is not None and "no authentication" in sandbox.warning
    err = StringIO()
    args = ["sandbox", "--spec", str(BOOKSHOP), "--host", "0.0.0.0", "--port", "0"]
    assert cli_run(args, StringIO(), err) == 2
    assert "--allow-remote" in err.getvalue()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}


def _listening(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as s:
        return s.connect_ex((host, int(port))) == 0


def _until(condition: Callable[[], bool], what: str, limit: float = 60.0) -> None:
    """Wait for ``condition``; ``limit`` only ends a test whose product never gets there."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def test_sigterm_lets_answers_in_flight_finish_and_a_second_one_kills(tmp_path: Path) -> None:
    """Answers in flight get the grace; idle and half-sent connections do not hold the
    shutdown up; a second SIGTERM ends the process at once. Two requests are held in the
    sandbox until the test releases them (a file per request): after the first SIGTERM
    the released one is answered, and the second SIGTERM ends the process with the
    other still held."""
    gate = tmp_path / "gate"
    code = textwrap.dedent(
        f"""
        import os, sys, time
        from autofeedback.serve import _sandbox
        answer = _sandbox.Sandbox.handle
        def held(self, method, target, *args, **kwargs):
            if "held" in target:
                name = target.split("held")[1][:1]
                open({str(gate)!r} + ".started-" + name, "w").close()
                while not os.path.exists({str(gate)!r} + ".release-" + name):
                    time.sleep(0.02)
            return answer(self, method, target, *args, **kwargs)
        _sandbox.Sandbox.handle = held
        sys.exit(_sandbox.run_sandbox({str(BOOKSHOP)!r}, port=0, grace=600,
                 stdout=sys.stdout, stderr=sys.stderr))
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        session = requests.Session()  # an idle keep-alive connection
        assert session.get(url + "/books", params={"query": "x"}, timeout=10).ok
        half = socket.create_connection(url.removeprefix("http://").split(":"), timeout=10)
        half.sendall(b"GET /books HTTP/1.1\r\n")  # a request that never ends
        statuses: dict[str, int] = {}

        def held_request(name: str) -> None:
            with contextlib.suppress(requests.RequestException):  # cut off: as expected
                got = requests.get(url + "/books", params={"query": "held" + name}, timeout=900)
                statuses[name] = got.status_code

        in_flight = [threading.Thread(target=held_request, args=(n,), daemon=True) for n in "ab"]
        for t in in_flight:
            t.start()
        _until(lambda: all(Path(f"{gate}.started-{n}").exists() for n in "ab"), "both held")
        proc.send_signal(signal.SIGTERM)
        _until(lambda: not _listening(url), "the sandbox stopped listening")
        Path(f"{gate}.release-a").touch()  # one answer in flight is given...
        _until(lambda: "a" in statuses, "the released request was answered")
        assert statuses == {"a": 200} and proc.poll() is None  # ...the other is awaited
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == -signal.SIGTERM  # "b" never released: at once
        assert "b" not in statuses
        half.close()
        session.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_sigterm_with_idle_and_half_sent_connections_stops_at_once() -> None:
    """Nothing being answered: the first SIGTERM ends the process, though an idle
    keep-alive connection and a half-sent request are open and the grace is 600 s."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.cli import main; main()", "sandbox",
         "--spec", str(BOOKSHOP), "--port", "0", "--shutdown-grace", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        session = requests.Session()
        assert session.get(url + "/books", params={"query": "x"}, timeout=10).ok
        half = socket.create_connection(url.removeprefix("http://").split(":"), timeout=10)
        half.sendall(b"GET /books HTTP/1.1\r\n")
        # the half-sent request is being read once a request after it is answered
        assert requests.get(url + "/books", params={"query": "y"}, timeout=10).ok
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0  # 120 s ends a hang only; the grace is 600 s
        half.close()
        session.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
