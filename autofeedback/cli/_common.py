"""What every command shares: the one-line usage error, its prefix, the exit codes, the
argument parser that reports instead of exiting, and loading the specs a command names.

Light on purpose: building the parser (``--version``, ``--help``) imports this module and
nothing heavy behind it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autofeedback.catalog._catalog import ApiCatalog


class _Usage(Exception):
    """Bad command-line input: reported in one line, exit 2."""


#: every error line the command writes starts with this
_ERROR = "autofeedback: error: "

_EXIT_CODES = """exit codes:
  0  clean: no errors (warnings may be listed)
  1  findings: at least one error, or the loop did not meet its requirement
  2  bad input: a missing or broken spec or log, bad options, an unreachable server"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's layout and shows every meaningful default in the help."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if isinstance(action, argparse.BooleanOptionalAction) and isinstance(default, bool):
            # "--semantic, --no-semantic ... (default: on)", not argparse's "(default: True)"
            text = text.replace(" (default: %(default)s)", "")
            return f"{text} (default: {'on' if default else 'off'})"
        if (
            not text
            or "default" in text
            or default in (None, False, [], argparse.SUPPRESS)
            or not action.option_strings
        ):
            return action.help
        return text + " (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse would sys.exit; we return 2
        command = self.prog.removeprefix("autofeedback").strip()
        message += self._did_you_mean(message)
        raise _Usage(f"{command}: {message}" if command else message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and " " in self.prog:
            # a command's stray arguments are reported by that command's parser, which knows
            # the options to suggest (argparse reports them from the top, suggesting none)
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _did_you_mean(self, message: str) -> str:
        """``" (did you mean --spec?)"`` for a misspelt option or choice; ``""`` when
        nothing is close. argparse suggests nothing before Python 3.14."""
        import difflib

        if message.startswith("unrecognized arguments:"):
            known = [o for a in self._actions for o in a.option_strings]
            words = message.split(":", 1)[1].split()
            flags = [w.split("=", 1)[0] for w in words if w.startswith("-") and w != "-"]
            hints = []
            for flag in flags:
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
                if close:
                    hints.append(close[0] if len(flags) == 1 else f"{close[0]} for {flag}")
            return f" (did you mean {', '.join(hints)}?)" if hints else ""
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2)) or choice.group(2).split(", ")
            close = difflib.get_close_matches(choice.group(1), options, n=1, cutoff=0.6)
            return f"; did you mean {close[0]!r}?" if close else ""
        return ""


def _require(args: argparse.Namespace, *names: str) -> None:
    """argparse's ``required=True``, checked after configuration filled what it could."""
    missing = [n for n in names if not getattr(args, n)]
    if missing:
        flags = ", ".join("--" + n.replace("_", "-") for n in missing)
        hint = " (or set it in [tool.autofeedback] in pyproject.toml)" if "spec" in missing else ""
        raise _Usage(f"{args.command}: the following arguments are required: {flags}{hint}")


def _load_specs(paths: Sequence[str]) -> ApiCatalog | None:
    from autofeedback.catalog._catalog import ApiCatalog

    if not paths:
        return None
    catalogs = [ApiCatalog.from_file(p) for p in paths]
    return catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)
