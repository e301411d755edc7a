"""Option groups more than one command takes, written once so that they read the same
in every command's help: ``--repair``, ``--host``/``--allow-remote`` and
``--shutdown-grace``."""

from __future__ import annotations

import argparse
from typing import Any

#: :data:`autofeedback.decide.REPAIR_MODES`, named here so that building the parser
#: (``--version``, ``--help``) does not import the decision and the checks behind it;
#: tests/test_lazy_imports.py holds the two equal
_REPAIR_MODES = ("sure", "off")


def _repair_flag(parser: argparse.ArgumentParser) -> None:
    """``--repair``, the same on every command that decides what happens to a call."""
    parser.add_argument(
        "--repair",
        choices=_REPAIR_MODES,
        default="sure",
        help="sure: repair what the docs leave one answer for (a name spelled another way, "
        "'3' for an integer, a parameter the API does not take) instead of asking the model "
        "again, each repair shown; off: every error goes back to the model (default sure)",
    )


def _host_arguments(parser: Any, what: str) -> None:
    """--host and --allow-remote: the one host rule of the three servers."""
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1); a non-loopback one needs --allow-remote",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help=f"let --host be a non-loopback address ({what} has no authentication: anyone "
        "who can reach the port can use it; a warning is printed)",
    )


def _grace_argument(parser: Any) -> None:
    parser.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, in-flight requests get this long to finish before they "
        "are cancelled; a second signal stops at once (default 10)",
    )
