"""Check LLM-generated API requests against an API spec: scan one output, audit a log,
check an agent's tool calls through an OpenAI-compatible or an MCP proxy, serve a sandbox,
build a doc index, or run the feedback loop against a live API.

``run(argv, stdout, stderr) -> int`` does the work and is what tests call;
``main()`` only exits with its result. Exit codes: 0 clean, 1 findings, 2 bad input.

One module per command (``_scan``, ``_audit``, ``_sandbox``, ``_index``, ``_flow``,
``_run``, ``_mcp_proxy``, ``_proxy``), each adding its own sub-parser and importing what
it needs only when it runs; ``_commands`` builds the parser from them, ``_options`` holds
the option groups several commands take, ``_config`` reads ``[tool.autofeedback]``,
``_formatters`` the audit's report formats and ``_common`` what every command shares.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import IO, Any

from autofeedback.cli._commands import COMMANDS, _parser
from autofeedback.cli._common import _ERROR, _Usage
from autofeedback.cli._config import _config_values, find_config

# what tests, the docs' hooks and benchmarks import from here
from autofeedback.cli._formatters import _JsonlFormatter as _JsonlFormatter
from autofeedback.cli._options import _REPAIR_MODES as _REPAIR_MODES

# only what every command needs: a command imports its own parts (the checks, the spec
# loaders, the servers) when it runs, so `autofeedback --version` imports none of them
from autofeedback.core._exceptions import AutoFeedbackError, SpecWarning

__all__ = ["main", "run"]


def run(
    argv: Sequence[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """Run the CLI; returns the exit code (0 clean, 1 findings, 2 bad input).

    >>> run(["--version"])  # doctest: +SKIP
    autofeedback 0.1.0
    0
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    inp = stdin if stdin is not None else sys.stdin
    argv = list(argv) if argv is not None else sys.argv[1:]
    with warnings.catch_warnings():
        # a spec that loads but means less than its author thinks: one line, said once
        warnings.simplefilter("once", SpecWarning)

        def show(message: Warning | str, *_: Any, **__: Any) -> None:
            err.write(f"autofeedback: warning: {message}\n")

        warnings.showwarning = show
        return _dispatch(argv, out, err, inp)


def _dispatch(argv: list[str], out: IO[str], err: IO[str], inp: IO[str]) -> int:
    try:
        config = _config_values(find_config())
        parser = _parser(config)
        try:
            # --help and --version print to sys.stdout and exit: keep both in-process
            with contextlib.redirect_stdout(out):
                args = parser.parse_args(argv)
        except SystemExit as stop:
            return stop.code if isinstance(stop.code, int) else 0
        if getattr(args, "spec", ()) is None:
            args.spec = config.get("spec")
        command = COMMANDS.get(args.command)
        if command is None:  # pragma: no cover
            raise _Usage(f"unknown command {args.command!r}")
        return command(args, out, err, inp)
    except _Usage as exc:
        err.write(f"{_ERROR}{exc}\n")
        return 2
    except AutoFeedbackError as exc:
        err.write(f"{_ERROR}{exc}\n")
        return 2
    except BrokenPipeError:
        raise  # the reader left (| head): main() ends quietly
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        err.write(f"{_ERROR}{where}{exc.strerror or exc}\n")
        return 2


def main() -> None:
    """The console script: exits with :func:`run`'s code.

    ``autofeedback audit log.jsonl --spec api.yaml | head`` ends quietly when ``head``
    stops reading, as ``cat`` does: exit 141 (128 + SIGPIPE), nothing on stderr.
    """
    try:
        code = run()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit and would print "Exception ignored ...":
        # point it at devnull first (the recipe of the Python docs, "Note on SIGPIPE")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(128 + 13)
    sys.exit(code)
