"""Spec patterns are untrusted: matched in linear time (RE2) with ECMA-262 meaning, a
bounded matcher only for what RE2 cannot express, and never a stall on any path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, InvalidPatternWarning, Scanner
from autofeedback._patterns import (
    BOUNDED_TIMEOUT,
    InvalidPattern,
    compile_pattern,
    is_valid,
    matches,
)

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "^(a+)+$"
ATTACK = "a" * 40 + "!"


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^\p{Letter}+$", "école", True),
        (r"^\p{L}+$", "école1", False),
        (r"^\p{digit}+$", "৪২", True),
        (r"^\p{Script=Greek}+$", "αβγ", True),
        (r"^\d$", "\u0660", False),  # ECMA \d is ASCII
        (r"^\w$", "é", False),
        (r"^\s$", "\u2003", True),  # ECMA \s is Unicode white space
        (r"^\s$", "\v", True),
        (r"^\S$", "\xa0", False),
        ("^abc$", "abc\n", False),  # $ is the end, not before a final newline
        ("^.$", "\u2028", False),
        ("^[^]$", "\n", True),
        ("[]", "anything", False),
        (r"^\cC$", "\x03", True),
        (r"^\u00e9$", "é", True),
        (r"^\uD83D\uDC32$", "🐲", True),
        (r"^\u{1F432}$", "🐲", True),
        ("^🐲*$", "🐲🐲", True),
        ("^(?<year>[0-9]{4})$", "2024", True),
        ("^a{,2}$", "a{,2}", True),  # not a quantifier in ECMA
        (r"^[\d-]+$", "12-3", True),
        ("^[a-z]+$", "\ud800", False),  # a lone surrogate neither matches nor raises
    ],
)
def test_ecma_262_meaning_on_re2(pattern: str, text: str, expected: bool) -> None:
    compiled = compile_pattern(pattern)
    assert not compiled.bounded
    assert compiled.search(text) is expected


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        (r"^(\w)\1$", "aa", True),
        (r"^(\w)\1$", "ab", False),
        (r"^(?<y>\d+)-\k<y>$", "12-12", True),
        ("^(?=a)[a-z]+$", "abc", True),
        ("^(?!a)[a-z]+$", "abc", False),
        ("(?<!b)c", "bc", False),
    ],
)
def test_what_re2_cannot_express_runs_bounded(pattern: str, text: str, expected: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled.bounded
    assert compiled.search(text) is expected


def test_a_bounded_search_that_runs_out_of_time_decides_nothing() -> None:
    # catastrophic for a backtracking engine; the back-reference keeps it off RE2
    compiled = compile_pattern(r"^((a|aa)+)+\1b$")
    assert compiled.bounded
    started = time.perf_counter()
    assert compiled.search("a" * 5000) in (None, False)
    assert time.perf_counter() - started < BOUNDED_TIMEOUT + 0.8


@pytest.mark.parametrize("pattern", ["((", "[z-a]", "*a", r"\p{NoSuchThing}", "a{3,1}", "a\\"])
def test_a_pattern_that_is_no_regex_is_invalid(pattern: str) -> None:
    assert not is_valid(pattern)
    with pytest.raises(InvalidPattern):
        compile_pattern(pattern)
    assert matches(pattern, "x") is None


_PATTERN_CHARS = [*list("ab()[]{}*+?|\\^$.-,019dDwWsSbBpPuxck<>=!:_ "), "{2,}", "\\1", "(?="]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(_PATTERN_CHARS), max_size=24).map("".join),
        st.text(max_size=16),
        st.sampled_from([HOSTILE, "(x+x+)+y", r"^(\w+\s?)*$", "(a|aa)+$", r"(a+)+\1$"]),
    ),
    st.one_of(st.text(max_size=80), st.just(ATTACK), st.just("a" * 2000 + "!")),
)
def test_any_pattern_against_any_value_is_quick_and_never_raises(pattern: str, text: str) -> None:
    started = time.perf_counter()
    result = matches(pattern, text)
    assert result in (True, False, None)
    assert time.perf_counter() - started < 1.0


_ANY_PATTERN = st.one_of(
    st.lists(st.sampled_from(_PATTERN_CHARS), max_size=24).map("".join),
    st.text(max_size=16),
    st.sampled_from([HOSTILE, "(x+x+)+y", r"^(\w+\s?)*$", r"(a+)+\1$"]),
)


@settings(max_examples=120, deadline=None)
@given(_ANY_PATTERN, st.one_of(st.text(max_size=60), st.just(ATTACK)))
def test_any_spec_pattern_in_a_scan_is_quick_and_never_an_e1(pattern: str, text: str) -> None:
    tool = {
        "name": "f",
        "parameters": {
            "type": "object",
            "properties": {
                "s": {"type": "string", "pattern": pattern},
                "m": {"type": "object", "patternProperties": {pattern: {"type": "integer"}}},
            },
        },
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidPatternWarning)  # "((" is dropped at load
        scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    started = time.perf_counter()
    found = list(scanner.iter_findings({"name": "f", "arguments": {"s": text, "m": {text: 1}}}))
    assert time.perf_counter() - started < 1.0
    assert all(f.code != "E1" for f in found), found


# -- every path a spec pattern reaches returns at once -------------------------------------

_TOOL = {
    "name": "tag",
    "parameters": {
        "type": "object",
        "properties": {
            "label": {"type": "string", "pattern": HOSTILE},
            "meta": {"type": "object", "patternProperties": {HOSTILE: {"type": "integer"}}},
        },
        "required": ["label"],
    },
}


def _run(code: str, timeout: float = 60) -> str:
    """Run ``code`` in a fresh interpreter: a backtracking match holds the GIL, so only a
    process can be stopped when a path hangs."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"a hostile pattern stalled this path for over {timeout} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


_SETUP = f"""
import json, time
from autofeedback import ApiCatalog, Scanner
TOOL = json.loads({json.dumps(json.dumps(_TOOL))})
ATTACK = {ATTACK!r}
catalog = ApiCatalog.from_tools([TOOL])
started = time.perf_counter()
"""


def test_scan_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        scanner = Scanner(catalog, retriever=None)
        found = scanner.scan("tag(label=" + repr(ATTACK) + ", meta={" + repr(ATTACK) + ": 1})")
        print(found.code if found else None, round(time.perf_counter() - started, 3))
        """.replace("\n        ", "\n")
    )
    code, took = out.split()
    assert code == "E4.2" and float(took) < 2


def test_the_fast_path_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        from autofeedback.checks._check_values import accepts
        op = catalog.operations[0]
        print(accepts(op, {"label": ATTACK}), accepts(op, {"label": "aaa"}),
              round(time.perf_counter() - started, 3))
        """.replace("\n        ", "\n")
    )
    refused, accepted, took = out.split()
    assert (refused, accepted) == ("False", "True") and float(took) < 2


def test_the_audit_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        from autofeedback import audit_lines
        lines = [json.dumps({"call": {"name": "tag", "arguments": {"label": label}}})
                 for label in (ATTACK, "aaaa")]
        print(*[r.ok for r in audit_lines(lines, catalog, retriever=None)],
              round(time.perf_counter() - started, 3))
        """.replace("\n        ", "\n")
    )
    first, second, took = out.split()
    assert (first, second) == ("False", "True") and float(took) < 5


def test_the_sandbox_answers_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        import requests
        from autofeedback import Sandbox
        from autofeedback._openapi import function_path
        with Sandbox(catalog) as sandbox:
            url = sandbox.url + function_path("tag")
            bad = requests.post(url, json={"label": ATTACK}, timeout=30).status_code
            good = requests.post(url, json={"label": "aaa"}, timeout=30).status_code
        print(bad, good, round(time.perf_counter() - started, 3))
        """.replace("\n        ", "\n")
    )
    bad, good, took = out.split()
    assert bad.startswith("4") and good.startswith("2") and float(took) < 10


# -- a pattern that is not a regular expression --------------------------------------------


def test_an_invalid_pattern_is_dropped_at_load_with_a_warning_naming_the_parameter() -> None:
    tool = {
        "name": "find",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "((", "maxLength": 3}},
        },
    }
    with pytest.warns(InvalidPatternWarning, match=r"find: 'code': pattern '\(\(' is not"):
        catalog = ApiCatalog.from_tools([tool])
    scanner = Scanner(catalog, retriever=None)
    assert scanner.scan('find(code="ab")') is None  # not every output blamed
    found = scanner.scan('find(code="abcd")')
    assert found is not None and found.code == "E4.2"  # the rest of the schema still holds


def test_valid_patterns_load_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ApiCatalog.from_tools([_TOOL])


def test_unevaluated_properties_beside_a_hostile_pattern_returns_at_once() -> None:
    # jsonschema's unevaluatedProperties matches patternProperties with Python's re
    tool = {
        "name": "tag",
        "parameters": {
            "type": "object",
            "properties": {
                "meta": {
                    "type": "object",
                    "patternProperties": {HOSTILE: {"type": "integer"}},
                    "unevaluatedProperties": False,
                }
            },
        },
    }
    out = _run(
        f"""
        import json, time
        from autofeedback import ApiCatalog, Scanner
        scanner = Scanner(ApiCatalog.from_tools([json.loads({json.dumps(json.dumps(tool))})]),
                          retriever=None)
        started = time.perf_counter()
        bad = scanner.scan({{"name": "tag", "arguments": {{"meta": {{{ATTACK!r}: 1}}}}}})
        good = scanner.scan({{"name": "tag", "arguments": {{"meta": {{"aaa": 1}}}}}})
        print(bad.code if bad else None, good, round(time.perf_counter() - started, 3))
        """
    )
    bad, good, took = out.split()
    assert (bad, good) == ("E4.2", "None") and float(took) < 2


def test_exporting_a_spec_whose_example_meets_its_own_hostile_pattern_returns_at_once() -> None:
    # the export (to_openapi, the sandbox's start) drops examples that break their schema
    tool = {
        "name": "tag",
        "parameters": {
            "type": "object",
            "properties": {"label": {"type": "string", "pattern": HOSTILE, "example": ATTACK}},
        },
    }
    out = _run(
        f"""
        import json, time
        from autofeedback import ApiCatalog, Sandbox, to_openapi
        catalog = ApiCatalog.from_tools([json.loads({json.dumps(json.dumps(tool))})])
        started = time.perf_counter()
        document = to_openapi(catalog)
        with Sandbox(catalog):
            pass
        print(round(time.perf_counter() - started, 3))
        """
    )
    assert float(out) < 5
