"""Import direction between the folders of ``autofeedback/`` (see each folder's ``__init__``).

Lower folders never import higher ones, and nothing below the facade imports ``cli``:
the rule is read from the source with ``ast``, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "autofeedback"

# folder -> the autofeedback folders its modules must never import, lowest first:
# core < _parse, _specs < catalog < checks < flow < scanner; serve beside flow and scanner;
# decide < loop, audit < integrations < cli
_ABOVE_CATALOG = {"checks", "flow", "scanner", "serve", "decide", "loop", "audit", "integrations"}
FORBIDDEN: dict[str, set[str]] = {
    # the vocabulary: model, findings, exceptions, patterns, redaction, origins, cache
    "core": {"_parse", "_specs", "catalog", *_ABOVE_CATALOG, "cli"},
    "_parse": {"catalog", *_ABOVE_CATALOG, "cli"},
    "_specs": {"_parse", "catalog", *_ABOVE_CATALOG, "cli"},
    # the API catalog, its schemas as tools, its OpenAPI export
    "catalog": {*_ABOVE_CATALOG, "cli"},
    "checks": {"flow", "scanner", "serve", "decide", "loop", "audit", "integrations", "cli"},
    "flow": {"scanner", "serve", "decide", "loop", "audit", "integrations", "cli"},
    # the scanner puts checks and flow together: one call, a sequence of calls
    "scanner": {"serve", "decide", "loop", "audit", "integrations", "cli"},
    # the sandbox and what every server shares
    "serve": {"flow", "scanner", "decide", "loop", "audit", "integrations", "cli"},
    # the one decision (forward, repair, feed back, stop) every entry point shares
    "decide": {"serve", "loop", "audit", "integrations", "cli"},
    "loop": {"audit", "integrations", "cli"},
    "audit": {"serve", "loop", "integrations", "cli"},
    "integrations": {"audit", "cli"},
    # the command line, one module per command, stands above every folder
    "cli": set(),
}
# the facade and the entry points stand above every folder
#: the public homes of the names past the few at the top: facades over the folders
HOMES = {
    f"{name}.py"
    for name in (
        "frameworks",
        "llm",
        "parsing",
        "proxy",
        "responses",
        "runners",
        "sandbox",
        "sequences",
    )
}
ABOVE = {"__init__.py", "pytest_plugin.py", "__main__.py", "cli", *HOMES}


def _folder_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "autofeedback":
        return None
    if len(parts) == 1:
        return None  # the facade: only entry points import it (checked below)
    return parts[1]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # `from autofeedback import cli` names a module through the package
            if node.module == "autofeedback":
                found.update(f"autofeedback.{alias.name}" for alias in node.names)
    return found


def _modules() -> list[Path]:
    return sorted(
        path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in ABOVE
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    relative = path.relative_to(PACKAGE)
    folder = relative.parts[0] if len(relative.parts) > 1 else ""
    bad = sorted(
        name
        for name in _imports(path)
        if _folder_of(name) in FORBIDDEN[folder] or name.split(".")[:2] == ["autofeedback", "cli"]
    )
    assert not bad, f"{relative} imports {bad}, above its folder {folder or '(top)'!r}"


def test_every_folder_has_a_rule() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders <= set(FORBIDDEN), f"no import rule for {sorted(folders - set(FORBIDDEN))}"


def test_the_rule_sees_a_violation(tmp_path: Path) -> None:
    # the check itself can fail: a lazy import of the loop inside a function is found
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from autofeedback.loop._loop import FeedbackLoop\n")
    assert _folder_of(next(iter(_imports(module)))) == "loop"


def test_no_module_lies_flat_beside_the_folders() -> None:
    flat = {p.name for p in PACKAGE.glob("*.py")} - ABOVE
    assert not flat, f"{sorted(flat)} lie at the top of autofeedback/: give each a folder"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports when it runs: ``if TYPE_CHECKING:`` blocks
    (annotations only) left out, ``from package import module`` counted as the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    me = _module_name(path)
    # a module's own packages are imported before it runs: no circle through them
    ancestors = {me.rsplit(".", n)[0] for n in range(1, me.count(".") + 1)}
    return {m for m in found if m in known and m != me and m not in ancestors}


def _import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {name: _runtime_imports(path, known) for name, path in paths.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                other = stack.pop()
                part.append(other)
                if other == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_modules() -> None:
    assert _circles(_import_graph()) == []


def test_no_import_circle_between_folders() -> None:
    def folder(module: str) -> str | None:
        parts = module.split(".")
        # the facade and the top-level entry points stand above every folder
        return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else None

    folders: dict[str, set[str]] = {}
    for module, imported in _import_graph().items():
        here = folder(module)
        if here is None:
            continue
        for other in imported:
            there = folder(other)
            if there is not None and there != here:
                folders.setdefault(here, set()).add(there)
    assert _circles(folders) == []


#: the most lines a module of autofeedback/ may have: past it, a module holds more than one
#: responsibility and is split by them (issue 41)
MAX_LINES = 800
#: modules exempt from MAX_LINES, each with its reason: generated tables only (none today)
LONG_MODULES: dict[str, str] = {}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in sorted(PACKAGE.rglob("*.py"))
        if (n := _lines(path)) > MAX_LINES and str(path.relative_to(PACKAGE)) not in LONG_MODULES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by responsibility): {long}"


def test_every_long_module_exemption_is_still_needed() -> None:
    # an exemption outlives its reason once the module is gone or short again
    for module, reason in LONG_MODULES.items():
        assert reason, f"{module}: an exemption names its reason"
        assert _lines(PACKAGE / module) > MAX_LINES, f"{module} is no longer long: drop it"


def test_the_circle_check_sees_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- every entry point's run logic is an adapter over the run driver (issue 41) -----------

#: the modules that run what the model writes, over their transport: the feedback loop,
#: the task runners, the OpenAI-compatible proxy's checked rounds, the MCP gate, the
#: framework doors
ADAPTERS = (
    "loop/_loop.py",
    "loop/_tasks.py",
    "loop/_program_runner.py",
    "loop/_react_runner.py",
    "integrations/_proxy_rounds.py",
    "integrations/_mcp_gate.py",
    "integrations/_door.py",
)
#: a run's bounds: counted and compared only by the driver (decide/_run.py)
BOUNDS = {
    "rounds",
    "tokens",
    "steps",
    "dynamic",
    "dynamic_left",
    "repeats",
    "answers",
    "max_rounds",
    "max_static",
    "max_dynamic",
    "max_steps",
    "token_budget",
    "repeat_limit",
    "repeat_retries",
}
#: words that only feedback, a stop or a not-run answer say: the feedback module's
FEEDBACK_WORDS = (
    "Please ",
    "Not run",
    "Observation:",
    "Thought:",
    "Stop repeating",
    "You sent",
    "did you mean",
    "Write the",
    "was not sent",
    "Unknown tool",
    "still invalid",
    "repeated a ",
    "not sent:",
)


def _stop_names() -> set[str]:
    """Every stop the driver names: its Literal vocabularies and its constants."""
    import typing

    from autofeedback.decide import _run

    names = set(typing.get_args(_run.StopReason)) | set(typing.get_args(_run.TaskStop))
    names |= {v for v in vars(_run).values() if isinstance(v, str) and v.islower() and "-" in v}
    names |= {v for table in _run._STOPS.values() for v in table.values()}
    names |= set(_run._OTHERWISE.values())
    names |= {_run.REPAIRED, _run.CORRECTED, _run.upstream_stop(None)}
    return names


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _literal_types(tree: ast.AST) -> set[int]:
    """The strings inside ``Literal[...]`` (a type's values) and the keys of dict
    displays (a JSON field's name), not what the code says."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal":
            found.update(id(n) for n in ast.walk(node.slice))
        if isinstance(node, ast.Dict):
            found.update(id(k) for k in node.keys if k is not None)
    return found


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@pytest.mark.parametrize("module", ADAPTERS)
def test_an_entry_point_is_an_adapter_over_the_run_driver(module: str) -> None:
    path = PACKAGE / module
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert "autofeedback.decide._run" in _imports(path), f"{module} does not use the run driver"
    skip = _docstrings(tree) | _literal_types(tree)
    stops = _stop_names()
    problems = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            # a counter of its own: rounds += 1, tokens += ...
            if isinstance(node, ast.AugAssign) and _name(node.target) in BOUNDS:
                problems.append(f"line {node.lineno}: counts {_name(node.target)}")
            # a bound checked outside the configuration's validation
            if isinstance(node, ast.Compare) and func.name not in ("__init__", "__post_init__"):
                names = {_name(n) for n in (node.left, *node.comparators)}
                for bound in sorted(names & BOUNDS):
                    problems.append(f"line {node.lineno}: compares {bound}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if id(node) in skip:
            continue
        if node.value in stops or node.value.startswith("upstream-"):
            problems.append(f"line {node.lineno}: names the stop {node.value!r}")
        said = [w for w in FEEDBACK_WORDS if w in node.value]
        # module-level templates are prompts (what the task asks), not feedback
        if said and any(node in ast.walk(f) for f in tree.body if _is_function(f)):
            problems.append(f"line {node.lineno}: words feedback {said[0]!r}")
    for node in ast.walk(tree):
        # a key of its own: hashing or serialising calls to compare them
        if isinstance(node, ast.FunctionDef) and "key" in node.name:
            problems.append(f"line {node.lineno}: defines a call key {node.name}")
    assert not problems, f"{module} keeps run logic of its own: " + "; ".join(problems)


def _is_function(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def test_the_adapter_rule_sees_a_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the check itself can fail: a module with a rounds counter of its own and a stop name
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from autofeedback.decide._run import Run\n"
        "def run(self):\n    rounds = 0\n    rounds += 1\n    return 'max-rounds'\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path)
    with pytest.raises(AssertionError, match=r"counts rounds.*names the stop 'max-rounds'"):
        test_an_entry_point_is_an_adapter_over_the_run_driver("bad.py")


def test_no_import_circle_between_the_audit_and_its_repairs() -> None:
    # the audit's repairs are the decision's (decide/_records.py), which imports no audit
    records = PACKAGE / "decide" / "_records.py"
    assert not {m for m in _imports(records) if m.startswith("autofeedback.audit")}
    assert not (PACKAGE / "audit" / "_fix.py").exists()
