"""The commands and the command line's parser: the top-level help (description, exit
codes, examples, environment, configuration keys) and one sub-parser per command, each
added by the command's own module, with ``[tool.autofeedback]`` as their defaults.

Each command module holds ``add_parser(sub)`` and ``command(args, out, err, inp) -> int``
and imports what it needs (the checks, the spec loaders, the servers) only when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import IO, Any

from autofeedback.cli import _audit, _flow, _index, _mcp_proxy, _proxy, _run, _sandbox, _scan
from autofeedback.cli._common import _EXIT_CODES, _Parser
from autofeedback.cli._config import _CONFIG_KEYS, _configure

_EPILOG = f"""{_EXIT_CODES}

examples:
  autofeedback scan --spec specs/examples/bookshop.yaml "GET /books?query=dune&limit=ten"
  autofeedback audit specs/examples/requests.jsonl --spec specs/examples/bookshop.yaml
  autofeedback sandbox --spec specs/examples/bookshop.yaml --terse
  autofeedback run --spec specs/examples/bookshop.yaml --instruction "Find science books"
  autofeedback proxy --upstream http://127.0.0.1:8080/v1
  autofeedback mcp-proxy --log calls.jsonl -- python weather_server.py

environment:
  AUTOFEEDBACK_MODEL       model name for an OpenAI-compatible --llm URL (--model wins)
  OPENAI_API_KEY           key sent to an OpenAI-compatible --llm URL
  AUTOFEEDBACK_CACHE_DIR   cache of loaded specs and local models (~/.cache/autofeedback)
  AUTOFEEDBACK_EMBEDDER    embedding model of the semantic checks and the doc index

configuration:
  [tool.autofeedback] in the nearest pyproject.toml (searched from the current folder
  upwards) sets defaults; command-line flags override it. Keys:
  {{keys}}."""


def _version() -> str:
    # the package's own attribute, which setup.cfg reads as the distribution's version:
    # importlib.metadata would import the email parser and scan the installed
    # distributions, the larger part of `autofeedback --version`
    from autofeedback import __version__

    return __version__


def _parser(config: Mapping[str, Any] | None = None) -> argparse.ArgumentParser:
    import autofeedback.cli

    doc = (autofeedback.cli.__doc__ or "").split("\n\n")[0].replace("\n", " ")
    p = _Parser(
        prog="autofeedback",
        description=doc,
        epilog=_EPILOG.format(keys=", ".join(sorted(_CONFIG_KEYS))),
    )
    p.add_argument("--version", action="version", version=f"autofeedback {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    # in the order `autofeedback --help` lists them
    s = _scan.add_parser(sub)
    a = _audit.add_parser(sub)
    sb = _sandbox.add_parser(sub)
    ib = _index.add_parser(sub)
    _flow.add_parser(sub)
    r = _run.add_parser(sub)
    m = _mcp_proxy.add_parser(sub)
    px = _proxy.add_parser(sub)
    _configure(
        {"scan": s, "audit": a, "sandbox": sb, "build": ib, "run": r, "mcp-proxy": m, "proxy": px},
        config or {},
    )
    return p


#: command name -> what runs it
COMMANDS: dict[str, Callable[[argparse.Namespace, IO[str], IO[str], IO[str]], int]] = {
    "scan": _scan.command,
    "audit": _audit.command,
    "sandbox": _sandbox.command,
    "index": _index.command,
    "flow": _flow.command,
    "run": _run.command,
    "mcp-proxy": _mcp_proxy.command,
    "proxy": _proxy.command,
}
