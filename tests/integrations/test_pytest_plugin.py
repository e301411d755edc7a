"""The pytest plugin, run with pytester against the sandbox on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from autofeedback import ApiCatalog

# The plugin imports its checks only once a spec is named, so the first in-process run
# would import this module, and pytester puts sys.modules back after each run: the next
# run would warn with a new AutoFeedbackWarning class while pytest's cached "-W" filter
# (RECORD) still names the old one. Imported here, it outlives the runs.
from autofeedback.integrations import _adapter  # noqa: F401
from autofeedback.serve._sandbox import Sandbox

pytest_plugins = ["pytester"]

BOOKSHOP = Path(__file__).resolve().parents[2] / "specs" / "examples" / "bookshop.yaml"
# Loaded by its pytest11 entry point once the package is installed with it; until then
# (an editable install made before the entry point existed) it is named explicitly.
PLUGIN = (
    []
    if any(ep.value == "autofeedback.pytest_plugin" for ep in entry_points(group="pytest11"))
    else ["-p", "autofeedback.pytest_plugin"]
)
# In-process runs inherit this suite's "filterwarnings = error": let the warnings under
# test be recorded as warnings.
RECORD = ["-W", "always::autofeedback.integrations._adapter.AutoFeedbackWarning"]


@pytest.fixture(scope="module")
def server() -> Iterator[Sandbox]:
    with Sandbox(ApiCatalog.from_file(BOOKSHOP)) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[Sandbox]:
    """A server no spec covers."""
    ping = ApiCatalog.from_tools([{"name": "ping", "parameters": {"type": "object"}}])
    with Sandbox(ping, host="127.0.0.2") as sandbox:
        yield sandbox


@pytest.fixture
def project(pytester: pytest.Pytester, server: Sandbox, elsewhere: Sandbox) -> pytest.Pytester:
    """A test project with the bookshop spec served by the sandbox, as ``api.yaml``."""
    spec = BOOKSHOP.read_text().replace("http://127.0.0.1:8080", server.url)
    pytester.makefile(".yaml", api=spec)
    pytester.makeconftest(
        f"""
        SERVER = {server.url!r}
        ELSEWHERE = {elsewhere.url!r}
        """
    )
    return pytester


TESTS = """
    import requests
    from conftest import SERVER, ELSEWHERE

    def test_good():
        assert requests.get(SERVER + "/books", params={"query": "dune"}).status_code == 200

    def test_misspelled_parameter():
        requests.get(SERVER + "/books", params={"query": "dune", "limt": 5,
                                                "api_key": "s3cr3t-value"})

    def test_swallowed():
        try:
            requests.post(SERVER + "/orders", json={"book_id": "seven", "quantity": 1})
        except requests.RequestException:
            pass

    def test_not_covered():
        assert requests.post(ELSEWHERE + "/ping", json={"x": 1}).status_code == 400
"""


def test_off_unless_asked(project: pytest.Pytester) -> None:
    project.makepyfile(TESTS)
    result = project.runpytest(*PLUGIN)
    result.assert_outcomes(passed=4)
    assert "= autofeedback =" not in result.stdout.str()


def test_cli_spec_fails_malformed_calls_with_a_report(project: pytest.Pytester) -> None:
    project.makepyfile(test_calls=TESTS)
    result = project.runpytest(*PLUGIN, "--autofeedback-spec", "api.yaml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*autofeedback: 1 request(s) broke the API docs",
            "GET http://127.0.0.1:*/books?query=dune&limt=5&api_key=*REDACTED* (searchBooks)"
            " breaks the API docs:",
            "  E3.3 semantic variant of a parameter name at query.limt: unknown query "
            "parameter 'limt'*",
            "    suggestion: limit",
            "  called at test_calls.py:8",
        ]
    )
    assert "s3cr3t-value" not in out
    # the test that swallowed the server's error fails all the same, with the doc line
    result.stdout.fnmatch_lines(
        [
            "POST http://127.0.0.1:*/orders (createOrder) breaks the API docs:",
            "  E4.1 value type mismatch at body.book_id:*",
            "    doc: The id of the book to buy.*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*= autofeedback =*",
            "3 request(s) checked against the API docs, 3 finding(s)",
            "E3.3  semantic variant of a parameter name: 1",
            "E3    unknown parameter: 1",
            "E4.1  value type mismatch: 1",
        ]
    )


def test_warn_mode_passes_with_a_warning(project: pytest.Pytester) -> None:
    project.makepyfile(TESTS)
    result = project.runpytest(
        *PLUGIN, *RECORD, "--autofeedback-spec", "api.yaml", "--autofeedback-mode=warn"
    )
    result.assert_outcomes(passed=4, warnings=2)
    # attributed to the test's own line, not to requests' internals
    result.stdout.fnmatch_lines(
        ["*test_warn_mode_passes_with_a_warning.py:8: AutoFeedbackWarning: GET*"]
    )


def test_marker_turns_it_on_per_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest, requests
        from conftest import SERVER

        @pytest.mark.autofeedback(spec="api.yaml")
        def test_marked():
            requests.get(SERVER + "/books", params={"query": "dune", "sort": "price"})

        @pytest.mark.autofeedback(spec=["api.yaml"], mode="warn")
        def test_marked_warn():
            requests.get(SERVER + "/books", params={"query": "dune", "sort": "price"})

        def test_unmarked():
            requests.get(SERVER + "/books", params={"query": "dune", "sort": "price"})

        @pytest.mark.autofeedback
        def test_marked_without_spec():
            pass
        """
    )
    result = project.runpytest(*PLUGIN, *RECORD, "--strict-markers")
    result.assert_outcomes(passed=2, failed=1, errors=1, warnings=1)
    result.stdout.fnmatch_lines(["*E4.2 value constraint violation at query.sort:*"])
    result.stdout.fnmatch_lines(["*@pytest.mark.autofeedback needs spec=...*"])


def test_ini_spec(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nautofeedback_spec =\n    api.yaml\n")
    project.makepyfile(TESTS)
    result = project.runpytest(*PLUGIN)
    result.assert_outcomes(passed=2, failed=2)


def test_fixture_for_explicit_use(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import requests
        from conftest import SERVER

        def test_explicit(autofeedback_guard):
            requests.get(SERVER + "/books", params={"limit": 5})  # not yet checked
            autofeedback_guard.use("api.yaml", mode="warn")
            requests.get(SERVER + "/books", params={"limit": 5})
            [violation] = autofeedback_guard.violations
            assert [f.code for f in violation.findings] == ["E3.4"]
            assert violation.operation == "searchBooks"
        """
    )
    result = project.runpytest(*PLUGIN, *RECORD)
    result.assert_outcomes(passed=1, warnings=1)


def test_a_bad_spec_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile(TESTS)
    result = project.runpytest(*PLUGIN, "--autofeedback-spec", "missing.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*autofeedback: cannot use spec*missing.yaml*"])


def test_xdist_workers_report_their_counts(project: pytest.Pytester) -> None:
    project.makepyfile(test_calls=TESTS)
    result = project.runpytest_subprocess(
        *PLUGIN, "-n", "2", "--autofeedback-spec", "api.yaml", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*= autofeedback =*",
            "3 request(s) checked against the API docs, 3 finding(s)",
            "E3.3  semantic variant of a parameter name: 1",
            "E3    unknown parameter: 1",
            "E4.1  value type mismatch: 1",
        ]
    )


def test_fail_mode_sends_the_call_and_fails_after(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import requests
        from conftest import SERVER

        def test_bad_type_reaches_the_server():
            r = requests.post(SERVER + "/orders", json={"book_id": "seven", "quantity": 1})
            print("SERVER ANSWERED", r.status_code)
        """
    )
    result = project.runpytest(*PLUGIN, "--autofeedback-spec", "api.yaml", "-s")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*SERVER ANSWERED 4*", "*E4.1 value type mismatch*"])


def test_expect_marks_a_negative_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest, requests
        from conftest import SERVER

        @pytest.mark.autofeedback(spec="api.yaml", expect="E4.1")
        def test_server_rejects_a_bad_type():
            r = requests.post(SERVER + "/orders", json={"book_id": "seven", "quantity": 1})
            assert 400 <= r.status_code < 500

        @pytest.mark.autofeedback(spec="api.yaml", expect="E4")
        def test_expectation_goes_stale():
            requests.get(SERVER + "/books", params={"query": "dune"})

        def test_fixture_expect(autofeedback_guard):
            autofeedback_guard.use("api.yaml")
            autofeedback_guard.expect("E4.1")
            r = requests.post(SERVER + "/orders", json={"book_id": "seven", "quantity": 1})
            assert r.status_code >= 400 and autofeedback_guard.violations == []
        """
    )
    result = project.runpytest(*PLUGIN, "--strict-markers")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*expects a call with E4 (expect=...), but no call*"])


def test_a_fixture_that_checks_nothing_says_so(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import requests
        from conftest import SERVER

        def test_forgot_use(autofeedback_guard):
            requests.get(SERVER + "/books", params={"limit": 5})
        """
    )
    result = project.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*autofeedback_guard fixture checked nothing*use(SPEC)*"])


def test_a_call_it_could_repair_is_sent_as_written_and_reported(project: pytest.Pytester) -> None:
    """The plugin makes the guard's one decision (issue 43): a test's call is never
    repaired behind its back, so what the report shows is what the server got; the
    certain repair is the report's suggestion."""
    project.makepyfile(
        """
        import requests
        from conftest import SERVER

        def test_wrong_case(autofeedback_guard):
            autofeedback_guard.use("api.yaml", mode="warn")
            r = requests.post(SERVER + "/orders", json={"book_id": 7, "Quantity": 2})
            assert r.status_code == 400
            assert r.request.body == b'{"book_id": 7, "Quantity": 2}'
            [violation] = autofeedback_guard.violations
            assert [f.code for f in violation.errors] == ["E3.2", "E3.4"]
        """
    )
    result = project.runpytest(*PLUGIN, *RECORD)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*E3.2*body.Quantity*", "*suggestion: quantity*"])
