"""The examples of the README and of the documentation site (``docs/**/*.md``) run, so
they cannot drift (issues 19 and 28).

Only blocks marked with an HTML comment right before their fence are run; other
sections (and the ones other people add) are left alone:

* ``<!-- tested -->``: run it (``sh`` with bash, ``python`` with this interpreter) in a
  folder holding a copy of ``specs/``; it must exit 0 without a traceback;
* ``exit=N``: it must exit with N; ``contains="..."``: its stdout must hold that text;
* ``sandbox="SPEC"``: the sandbox serves SPEC on its declared port while it runs;
* ``skip="reason"``: shown as skipped with the reason (network, builds software);
* ``requires="module[,module]"``: skipped, naming the module, where one of them cannot be
  imported (an agent framework's page needs its optional extra);
* a ``text`` fence marked ``<!-- output -->`` right after a tested block is what it
  must print, exactly.

A block that appears word for word in the README and on a page (the README shows one
example per use and links the page) is run once.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from _support.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the README and every page of the site (the hooks folder holds Python, not pages)
SOURCES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)]

_FENCE = re.compile(
    r"<!--\s*tested(?P<attrs>[^>]*?)\s*-->\s*\n```(?P<lang>\w+)\n(?P<code>.*?)\n```"
    r"(?:\s*\n<!--\s*output\s*-->\s*\n```text\n(?P<output>.*?)\n```)?",
    re.DOTALL,
)
_ATTR = re.compile(r'(\w+)=(?:"([^"]*)"|(\S+))')


@dataclass
class Example:
    section: str
    lang: str
    code: str
    attrs: dict[str, str]
    output: str | None
    source: str = "README"

    @property
    def id(self) -> str:
        return re.sub(r"\W+", "-", f"{self.source} {self.section}".lower()).strip("-")

    @property
    def key(self) -> tuple[str, str, str, str | None]:
        return (self.lang, self.code, repr(sorted(self.attrs.items())), self.output)


def examples(text: str, source: str = "README") -> list[Example]:
    found = []
    for m in _FENCE.finditer(text):
        heading = re.findall(r"^#+ (.+)$", text[: m.start()], re.MULTILINE)
        attrs = {k: a or b for k, a, b in _ATTR.findall(m.group("attrs"))}
        found.append(
            Example(
                heading[-1] if heading else "top",
                m.group("lang"),
                m.group("code"),
                attrs,
                m.group("output"),
                source,
            )
        )
    return found


def _all_examples() -> list[Example]:
    found: dict[tuple[str, str, str, str | None], Example] = {}
    for path in SOURCES:
        name = path.stem if path != README else "README"
        for example in examples(path.read_text(encoding="utf-8"), name):
            found.setdefault(example.key, example)  # the same block twice is run once
    return list(found.values())


EXAMPLES = _all_examples()


def test_the_readme_and_the_docs_mark_examples() -> None:
    # the convention is in use: the README's set-up and one example per use, and the
    # pages' examples (scan, audit formats, guards, loop and runner demos, CLI...)
    readme = examples(README.read_text(encoding="utf-8"))
    assert len(readme) >= 5
    assert sum("skip" not in e.attrs for e in readme) >= 3
    assert sum("skip" not in e.attrs for e in EXAMPLES) >= 20
    assert {e.source for e in EXAMPLES} >= {"README", "audit", "scan", "tool-calls", "loop"}


def test_the_marker_grammar() -> None:
    text = (
        '# A\n<!-- tested exit=1 contains="x y" -->\n```sh\necho hi\n```\n\n'
        "<!-- output -->\n```text\nhi\n```\n# B\n```sh\nnot marked\n```\n"
    )
    [one] = examples(text)
    assert (one.section, one.lang, one.code, one.output) == ("A", "sh", "echo hi", "hi")
    assert one.attrs == {"exit": "1", "contains": "x y"}


def _copy_specs(target: Path, port: int) -> None:
    """``specs/`` as the README's commands see it, with the bundled spec's port 8080
    swapped for a free one: engineers and CI jobs run this suite side by side."""
    shutil.copytree(ROOT / "specs", target)
    for path in target.rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".jsonl", ".txt"):
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("127.0.0.1:8080", f"127.0.0.1:{port}"), encoding="utf-8")


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.id}-{i}" for i, e in enumerate(EXAMPLES)])
def test_readme_example(example: Example, tmp_path: Path) -> None:
    if "skip" in example.attrs:
        pytest.skip(example.attrs["skip"])
    for module in filter(None, example.attrs.get("requires", "").split(",")):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            pytest.skip(f"{module} is not installed (the page's optional extra)")
    port = free_port()
    _copy_specs(tmp_path / "specs", port)
    code = example.code.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
    }
    if example.lang == "sh":
        argv = ["bash", "-c", code]
    elif example.lang == "python":
        argv = [sys.executable, "-c", code]
    else:  # pragma: no cover - a marked block in a language this test cannot run
        pytest.fail(f"cannot run a {example.lang!r} block")
    sandbox = None
    if "sandbox" in example.attrs:
        from autofeedback import ApiCatalog
        from autofeedback.sandbox import Sandbox

        spec = tmp_path / example.attrs["sandbox"]
        sandbox = Sandbox(ApiCatalog.from_file(spec), port=port)
        sandbox.start()
    # files, not pipes: a server the block leaves in the background keeps a pipe open
    out_path, err_path = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out_path.open("w") as out_f, err_path.open("w") as err_f:
        proc = subprocess.Popen(
            argv, cwd=tmp_path, env=env, stdout=out_f, stderr=err_f, start_new_session=True
        )
        try:
            proc.wait(timeout=600)
        finally:
            # whatever the block started in the background (the sandbox) ends with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            if sandbox is not None:
                sandbox.stop()
    out = out_path.read_text(encoding="utf-8", errors="replace")
    err = err_path.read_text(encoding="utf-8", errors="replace")
    shown = f"$ {shlex.join(argv[:2])} ...\n--- stdout\n{out}\n--- stderr\n{err}"
    assert proc.returncode == int(example.attrs.get("exit", "0")), shown
    assert "Traceback" not in out + err and "Broken pipe" not in err, shown
    if "contains" in example.attrs:
        assert example.attrs["contains"] in out, shown
    if example.output is not None:
        assert out.rstrip("\n") == example.output.rstrip("\n"), shown
    if "--trace" in code:  # the run demo: the dynamic component really answered
        assert "dynamic feedback" in out and "success" in out, shown
