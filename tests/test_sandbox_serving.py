"""The sandbox under real traffic (issue 29): slow clients that would hold every slot,
huge query strings in what it records, the host rule, and SIGTERM with answers in
flight. A real server on 127.0.0.1, real sockets, the real ``autofeedback sandbox``."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from io import StringIO
from pathlib import Path

import pytest
import requests

from autofeedback import ApiCatalog, ConfigurationError
from autofeedback._sandbox import Sandbox
from autofeedback.cli import run as cli_run

ROOT = Path(__file__).resolve().parents[1]
BOOKSHOP = ROOT / "specs" / "examples" / "bookshop.yaml"


def test_slow_clients_cannot_hold_every_slot(bookshop: ApiCatalog) -> None:
    """Clients that send a header line every few seconds (slowloris) held every slot:
    each read was within the socket timeout, the request never ended."""
    stop = threading.Event()
    slow: list[socket.socket] = []

    def dribble(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.sendall(b"GET /books?query=dune HTTP/1.1\r\n")
            while not stop.wait(0.3):
                sock.sendall(b"X-Slow: 1\r\n")

    with Sandbox(bookshop, max_connections=4, request_timeout=1.5) as sandbox:
        threads = []
        for _ in range(6):  # more than the slots
            sock = socket.create_connection(("127.0.0.1", sandbox.port), timeout=10)
            slow.append(sock)
            threads.append(threading.Thread(target=dribble, args=(sock,), daemon=True))
            threads[-1].start()
        time.sleep(0.5)
        try:
            started = time.monotonic()
            answer = requests.get(sandbox.url + "/books", params={"query": "x"}, timeout=30)
            assert answer.status_code == 200
            assert time.monotonic() - started < 1.5 * 3 + 2  # a few request timeouts at most
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


def test_sigterm_lets_answers_in_flight_finish_and_a_second_one_kills() -> None:
    """Answers in flight get the grace; idle and half-sent connections do not hold the
    shutdown up; a second SIGTERM ends the process at once."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from autofeedback import _sandbox
        answer = _sandbox.Sandbox.handle
        def slow(self, method, target, *args, **kwargs):
            if "slow" in target:
                time.sleep(60)
            return answer(self, method, target, *args, **kwargs)
        _sandbox.Sandbox.handle = slow
        sys.exit(_sandbox.run_sandbox({str(BOOKSHOP)!r}, port=0, grace=60,
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

        def slow_request() -> None:
            with contextlib.suppress(requests.RequestException):  # cut off: as expected
                requests.get(url + "/books", params={"query": "slow"}, timeout=90)

        in_flight = threading.Thread(target=slow_request, daemon=True)
        in_flight.start()
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        time.sleep(1.5)
        assert proc.poll() is None  # the slow answer is still being given
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert time.monotonic() - started < 5
        assert proc.returncode == -signal.SIGTERM
        half.close()
        session.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_sigterm_with_idle_and_half_sent_connections_stops_at_once() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autofeedback.cli import main; main()", "sandbox",
         "--spec", str(BOOKSHOP), "--port", "0", "--shutdown-grace", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        session = requests.Session()
        assert session.get(url + "/books", params={"query": "x"}, timeout=10).ok
        half = socket.create_connection(url.removeprefix("http://").split(":"), timeout=10)
        half.sendall(b"GET /books HTTP/1.1\r\n")
        time.sleep(0.5)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - started < 5  # nothing was being answered: no grace
        half.close()
        session.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
