"""pytest plugin: every ``requests`` call a test makes to an API covered by a spec is
checked against the spec; a malformed call fails the test with a readable report.

Off unless asked, per run or per test::

    pytest --autofeedback-spec specs/bookshop.yaml          # or ini: autofeedback_spec
    pytest --autofeedback-spec api.yaml --autofeedback-mode=warn

    @pytest.mark.autofeedback(spec="specs/bookshop.yaml")
    def test_search(): ...

    def test_explicit(autofeedback_guard):
        autofeedback_guard.use("specs/bookshop.yaml")
        ...

    @pytest.mark.autofeedback(spec="specs/bookshop.yaml", expect="E4.1")
    def test_server_rejects_a_bad_type(): ...   # a negative test: the bad call is sent

In fail mode a malformed call is still sent, as the test wrote it (the plugin makes the
guard's one decision, :meth:`HttpGuard.decide`, and never repairs), so the test runs as
it would without the plugin; the test fails afterwards with the report. ``expect``
(codes or code families, ``"E4"`` covers ``"E4.1"``) marks the calls a test makes wrong
on purpose: they are sent and not reported, and the test fails if no call had them.

A URL is covered when its host is one of the spec's servers; every other URL passes
through untouched. The terminal summary counts the findings per error code over the
session (also under pytest-xdist: workers send their counts to the controller).

pytest loads the plugin in every run of an environment where autofeedback is installed,
so it registers its options, marker and fixture with nothing else imported: ``requests``,
the spec loaders and the checks load only once a spec is named (about 1.4 s it used to
add to every test run).
"""

from __future__ import annotations

import inspect
import warnings
from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from autofeedback.core._exceptions import AutoFeedbackError
from autofeedback.core._findings import CODES

if TYPE_CHECKING:
    import requests

    from autofeedback.catalog._catalog import ApiCatalog
    from autofeedback.integrations._adapter import HttpGuard, Violation

__all__ = ["GuardFixture"]

_MODES = ("fail", "warn")
_WORKER_KEY = "autofeedback_counts"


@dataclass
class _Session:
    """Per-run state, kept in ``config.stash`` (never module globals: pytester runs
    nested sessions in one process)."""

    specs: tuple[str, ...]
    mode: str
    root: Path
    guards: dict[tuple[str, ...], HttpGuard] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    requests: int = 0

    def guard(self, specs: tuple[str, ...]) -> HttpGuard:
        """The guard for a set of specs, loaded once per run."""
        cached = self.guards.get(specs)
        if cached is None:
            from autofeedback.catalog._catalog import ApiCatalog
            from autofeedback.integrations._adapter import HttpGuard

            catalogs = [_load(spec) for spec in specs]
            catalog = catalogs[0] if len(catalogs) == 1 else ApiCatalog.merge(*catalogs)
            try:
                # a test's call is sent as the test wrote it: the plugin reports what
                # it would repair, it never repairs (a test must not pass because of it)
                cached = HttpGuard(catalog, repair="off")
            except AutoFeedbackError as exc:
                raise _SpecProblem(f"autofeedback: cannot use {', '.join(specs)}: {exc}") from None
            self.guards[specs] = cached
        return cached


class _SpecProblem(Exception):
    """A spec named by an option, ini line or marker cannot be used."""


@dataclass
class _Test:
    """Per-test state: the active specs and the violations seen so far."""

    session: _Session
    item: pytest.Item
    mode: str
    specs: tuple[str, ...] = ()
    violations: list[tuple[Violation, str]] = field(default_factory=list)
    patch: pytest.MonkeyPatch | None = None
    #: codes (or families: "E4") this test sends on purpose, and those it did send
    expect: tuple[str, ...] = ()
    expected_seen: set[str] = field(default_factory=set)
    used_fixture: bool = False
    ever_active: bool = False

    def activate(self, specs: Iterable[str], mode: str | None = None) -> None:
        self.specs = tuple(dict.fromkeys([*self.specs, *specs]))
        if mode is not None:
            self.mode = _check_mode(mode)
        if not self.specs:
            return
        self.ever_active = True
        self.session.guard(self.specs)  # load now: a bad spec fails where it was named
        if self.patch is None:
            import requests

            self.patch = pytest.MonkeyPatch()
            original = requests.Session.send
            self.patch.setattr(requests.Session, "send", _patched_send(self, original))

    def deactivate(self) -> None:
        if self.patch is not None:
            self.patch.undo()
            self.patch = None

    def check(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        """The request to send (the guard's one decision, :meth:`HttpGuard.decide`), its
        violation recorded (and warned of in warn mode)."""
        if not self.specs:
            return request
        guard = self.session.guard(self.specs)
        if not guard.covers(request.url or ""):
            return request
        self.session.requests += 1
        verdict = guard.decide(request)
        violation = verdict.violation
        if violation is None:
            return verdict.request
        if self.expect:
            wanted = [f for f in violation.errors if self.expects(f.code)]
            self.expected_seen.update(e for e in self.expect for f in wanted if _covers(e, f.code))
            if len(wanted) == len(violation.errors):
                return verdict.request  # made wrong on purpose: sent, not reported
        from autofeedback.integrations._adapter import AutoFeedbackWarning, rejected

        where, level = _caller(self.item)
        self.violations.append((violation, where))
        self.session.counts.update(f.code for f in violation.errors)
        problem = rejected(violation, request, note=f"\n  called at {where}" if where else "")
        if self.mode == "warn":
            # attributed to the test's line, where a person looks first
            warnings.warn(AutoFeedbackWarning(problem.report), stacklevel=level)
        # fail mode still sends it: the test runs as it would without the plugin, and
        # fails afterwards with the report (pytest_runtest_call)
        return verdict.request

    def expects(self, code: str) -> bool:
        return any(_covers(e, code) for e in self.expect)

    def missing_expected(self) -> list[str]:
        return [e for e in self.expect if e not in self.expected_seen]

    def failure(self) -> str:
        parts = [f"autofeedback: {len(self.violations)} request(s) broke the API docs"]
        for violation, where in self.violations:
            parts.append(violation.report() + (f"\n  called at {where}" if where else ""))
        return "\n".join(parts)


def _patched_send(test: _Test, original: Any) -> Any:
    def send(self: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> Any:
        return original(self, test.check(request), **kwargs)

    return send


def _caller(item: pytest.Item) -> tuple[str, int]:
    """``file:line`` of the innermost frame in the test's file (where the call was made)
    and its ``stacklevel`` as seen from :meth:`_Test.check`; ``("", 4)`` if none is."""
    path = str(getattr(item, "path", ""))
    frame = inspect.currentframe()
    level = 0  # _caller itself; check() is level 1
    while frame is not None:
        if frame.f_code.co_filename == path:
            return f"{Path(path).name}:{frame.f_lineno}", level
        frame = frame.f_back
        level += 1
    return "", 4


def _covers(expected: str, code: str) -> bool:
    """``"E4"`` covers ``"E4.1"`` and ``"E4.2"``; ``"E4.1"`` only itself."""
    return code == expected or code.startswith(expected + ".")


def _codes(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = (
        [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    )
    if items is None or not all(isinstance(c, str) and c.split(".")[0] in _FAMILIES for c in items):
        raise _SpecProblem(
            f"@pytest.mark.autofeedback: expect must be error codes such as 'E4.1', not {value!r}"
        )
    return tuple(items)


_FAMILIES = frozenset(code.split(".")[0] for code in CODES)


def _check_mode(mode: str) -> str:
    if mode not in _MODES:
        raise _SpecProblem(f"autofeedback mode must be one of {', '.join(_MODES)}, not {mode!r}")
    return mode


def _resolve(spec: str | Path, *bases: Path) -> str:
    """An absolute spec path: as given when it exists, else under the first base that
    holds it (the test file's folder, the rootdir)."""
    path = Path(spec)
    if path.is_absolute() or path.exists():
        return str(path.resolve())
    for base in bases:
        if (base / path).exists():
            return str(base / path)
    return str(path)


def _load(spec: str) -> ApiCatalog:
    from autofeedback.integrations._guard import as_catalog

    try:
        return as_catalog(Path(spec))
    except AutoFeedbackError as exc:
        raise _SpecProblem(f"autofeedback: cannot use spec {spec!r}: {exc}") from None


_SESSION = pytest.StashKey[_Session]()
_TEST = pytest.StashKey[_Test]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autofeedback", "check requests calls against API specs")
    group.addoption(
        "--autofeedback-spec",
        action="append",
        default=[],
        metavar="SPEC",
        help="check every requests call to this spec's servers (repeatable)",
    )
    group.addoption(
        "--autofeedback-mode",
        choices=_MODES,
        default=None,
        help="fail (default) or warn when a call breaks the spec",
    )
    parser.addini("autofeedback_spec", "API specs whose servers' calls are checked", "linelist")
    parser.addini("autofeedback_mode", "fail (default) or warn", default="fail")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "autofeedback(spec=None, mode=None, expect=None): check this test's requests calls "
        "against the given spec(s) (a path or a list of paths); mode is 'fail' or 'warn'; "
        "expect names codes the test sends on purpose ('E4.1', or a family 'E4')",
    )
    cli: list[str] = config.getoption("autofeedback_spec") or []
    ini: list[str] = config.getini("autofeedback_spec") or []
    mode = config.getoption("autofeedback_mode") or config.getini("autofeedback_mode") or "fail"
    # CLI paths are relative to where pytest was started, ini lines to the rootdir
    specs = [_resolve(s) for s in cli] + [_resolve(s, config.rootpath) for s in ini]
    try:
        state = _Session(tuple(dict.fromkeys(specs)), _check_mode(str(mode)), config.rootpath)
        if state.specs:
            state.guard(state.specs)  # a bad spec stops the run before collection
    except _SpecProblem as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_SESSION] = state


def _marked(item: pytest.Item) -> tuple[bool, list[str], str | None, tuple[str, ...]]:
    """Whether the item has the marker, the specs it names, its mode and the codes it
    expects."""
    specs: list[str] = []
    mode: str | None = None
    expect: tuple[str, ...] = ()
    markers = list(item.iter_markers("autofeedback"))
    base = Path(str(getattr(item, "path", "."))).parent
    # closest marker last, so a test's own mode wins over its class' or module's
    for marker in reversed(markers):
        spec = marker.kwargs.get("spec", marker.args[0] if marker.args else None)
        if isinstance(spec, (str, Path)):
            specs.append(_resolve(spec, base, item.config.rootpath))
        elif isinstance(spec, Sequence):
            specs.extend(_resolve(s, base, item.config.rootpath) for s in spec)
        elif spec is not None:
            raise _SpecProblem(f"@pytest.mark.autofeedback: spec must be a path, not {spec!r}")
        mode = marker.kwargs.get("mode", mode)
        expect = _codes(marker.kwargs["expect"]) if "expect" in marker.kwargs else expect
    return bool(markers), specs, mode, expect


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    session = item.config.stash.get(_SESSION, None)
    problem = ""
    if session is not None:
        test = item.stash[_TEST] = _Test(session, item, session.mode)
        try:
            marked, specs, mode, test.expect = _marked(item)
            if marked and not specs and not session.specs:
                raise _SpecProblem(
                    "@pytest.mark.autofeedback needs spec=... "
                    "(or --autofeedback-spec / ini autofeedback_spec)"
                )
            test.activate([*session.specs, *specs], mode)
        except _SpecProblem as exc:
            problem = str(exc)
    result = yield
    # failed only now: the other plugins' setup (which their teardown relies on) has run
    if problem:
        pytest.fail(problem, pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    test = item.stash.get(_TEST, None)
    try:
        result = yield
    except Exception:
        if test is not None and test.violations and test.mode == "fail":
            # the report, not a traceback through requests' internals
            raise pytest.fail.Exception(test.failure(), pytrace=False) from None
        raise
    if test is not None and test.violations and test.mode == "fail":
        # the test passed with a malformed call (or caught the error it caused): still fail
        pytest.fail(test.failure(), pytrace=False)
    if test is not None and test.missing_expected():
        codes = ", ".join(test.missing_expected())
        pytest.fail(
            f"autofeedback: the test expects a call with {codes} (expect=...), "
            "but no call it made had one",
            pytrace=False,
        )
    if test is not None and test.used_fixture and not test.ever_active:
        pytest.fail(
            "autofeedback: the autofeedback_guard fixture checked nothing: call "
            "autofeedback_guard.use(SPEC), or name a spec with --autofeedback-spec, the "
            "autofeedback_spec ini line or @pytest.mark.autofeedback(spec=...)",
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    try:
        return (yield)
    finally:
        test = item.stash.get(_TEST, None)
        if test is not None:
            test.deactivate()


@pytest.fixture
def autofeedback_guard(request: pytest.FixtureRequest) -> GuardFixture:
    """Check this test's ``requests`` calls against a spec from here on.

    >>> def test_books(autofeedback_guard):                      # doctest: +SKIP
    ...     autofeedback_guard.use("specs/bookshop.yaml")
    ...     requests.get(SERVER + "/books", params={"query": "dune"})
    ...     assert autofeedback_guard.violations == []
    """
    test = request.node.stash.get(_TEST, None)
    if test is None:  # the plugin's setup hook did not run for this node
        session = request.config.stash[_SESSION]
        test = request.node.stash[_TEST] = _Test(session, request.node, session.mode)
        request.addfinalizer(test.deactivate)
    test.used_fixture = True
    return GuardFixture(test)


class GuardFixture:
    """What the ``autofeedback_guard`` fixture gives a test."""

    def __init__(self, test: _Test) -> None:
        self._test = test

    def use(self, *specs: str | Path, mode: str | None = None) -> None:
        """Check the test's ``requests`` calls against ``specs`` from now on."""
        base = Path(str(getattr(self._test.item, "path", "."))).parent
        paths = [_resolve(s, base, self._test.session.root) for s in specs]
        try:
            self._test.activate(paths, mode)
        except _SpecProblem as exc:
            pytest.fail(str(exc), pytrace=False)

    def expect(self, *codes: str) -> None:
        """This test makes calls with these findings on purpose (a negative test of the
        API's 4xx handling): they are sent and not reported, and the test fails if no
        call had them. ``"E4"`` covers every E4 subtype."""
        try:
            self._test.expect = tuple(dict.fromkeys([*self._test.expect, *_codes(list(codes))]))
        except _SpecProblem as exc:
            pytest.fail(str(exc).replace("@pytest.mark.autofeedback", "expect()"), pytrace=False)

    @property
    def violations(self) -> list[Violation]:
        """The calls that broke the docs so far in this test."""
        return [v for v, _ in self._test.violations]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_SESSION, None)
    workeroutput = getattr(config, "workeroutput", None)
    if state is not None and workeroutput is not None:
        workeroutput[_WORKER_KEY] = {"counts": dict(state.counts), "requests": state.requests}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    config = node.config
    state = config.stash.get(_SESSION, None)
    sent = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if state is None or not isinstance(sent, dict):
        return
    state.counts.update({str(k): int(v) for k, v in sent.get("counts", {}).items()})
    state.requests += int(sent.get("requests", 0))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None or (not state.requests and not state.counts):
        return
    terminalreporter.write_sep("=", "autofeedback")
    total = sum(state.counts.values())
    terminalreporter.write_line(
        f"{state.requests} request(s) checked against the API docs, {total} finding(s)"
    )
    for code in sorted(state.counts, key=lambda c: list(CODES).index(c)):
        terminalreporter.write_line(f"{code:<5} {CODES[code]}: {state.counts[code]}")
