"""Spec patterns are untrusted: matched in linear time (RE2) with ECMA-262 meaning, a
bounded matcher only for what RE2 cannot express, and never a stall on any path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autofeedback import ApiCatalog, InvalidPatternWarning, Scanner
from autofeedback.core._patterns import (
    InvalidPattern,
    compile_pattern,
    is_bounded,
    is_valid,
    matches,
)

ROOT = Path(__file__).resolve().parents[2]
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
    # catastrophic for a backtracking engine (years); the back-reference keeps it off
    # RE2. Run in a process of its own, so that an unbounded search fails the test
    # instead of hanging the suite; "None" is the bounded matcher giving up.
    assert compile_pattern(r"^((a|aa)+)+\1b$").bounded
    out = _run(
        """
        from autofeedback.core._patterns import compile_pattern
        print(compile_pattern(r"^((a|aa)+)+\\1b$").search("a" * 5000))
        """
    )
    assert out.split() == ["None"]


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
def test_any_pattern_against_any_value_decides_or_says_it_could_not(
    pattern: str, text: str
) -> None:
    # linear-time RE2 always decides; only the bounded matcher (RE2 cannot express the
    # pattern) may give up, and an invalid pattern decides nothing. (A stall would hang
    # here: the paths a hostile pattern reaches are run in processes of their own below.)
    result = matches(pattern, text)
    if not is_valid(pattern):
        assert result is None
    elif not is_bounded(pattern):
        assert result in (True, False)
    else:
        assert result in (True, False, None)


_ANY_PATTERN = st.one_of(
    st.lists(st.sampled_from(_PATTERN_CHARS), max_size=24).map("".join),
    st.text(max_size=16),
    st.sampled_from([HOSTILE, "(x+x+)+y", r"^(\w+\s?)*$", r"(a+)+\1$"]),
)


@settings(max_examples=120, deadline=None)
@given(_ANY_PATTERN, st.one_of(st.text(max_size=60), st.just(ATTACK)))
def test_any_spec_pattern_in_a_scan_is_never_an_e1(pattern: str, text: str) -> None:
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
    found = list(scanner.iter_findings({"name": "f", "arguments": {"s": text, "m": {text: 1}}}))
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


def _run(code: str, timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter: a backtracking match holds the GIL, so only a
    process can be stopped when a path hangs. ``timeout`` ends a hang (a backtracking
    match of the hostile pattern on the attack runs for years); it times nothing."""
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
import json
from autofeedback import ApiCatalog, Scanner
TOOL = json.loads({json.dumps(json.dumps(_TOOL))})
ATTACK = {ATTACK!r}
catalog = ApiCatalog.from_tools([TOOL])
"""


def test_scan_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        scanner = Scanner(catalog, retriever=None)
        found = scanner.scan("tag(label=" + repr(ATTACK) + ", meta={" + repr(ATTACK) + ": 1})")
        print(found.code if found else None)
        """.replace("\n        ", "\n")
    )
    assert out.split() == ["E4.2"]


def test_the_fast_path_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        from autofeedback.checks._check_values import accepts
        op = catalog.operations[0]
        print(accepts(op, {"label": ATTACK}), accepts(op, {"label": "aaa"}))
        """.replace("\n        ", "\n")
    )
    assert out.split() == ["False", "True"]


def test_the_audit_returns_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        from autofeedback import audit_lines
        lines = [json.dumps({"call": {"name": "tag", "arguments": {"label": label}}})
                 for label in (ATTACK, "aaaa")]
        print(*[r.ok for r in audit_lines(lines, catalog, retriever=None)])
        """.replace("\n        ", "\n")
    )
    assert out.split() == ["False", "True"]


def test_the_sandbox_answers_at_once_on_a_hostile_pattern() -> None:
    out = _run(
        _SETUP
        + """
        import requests
        from autofeedback.sandbox import Sandbox
        from autofeedback.catalog._openapi import function_path
        with Sandbox(catalog) as sandbox:
            url = sandbox.url + function_path("tag")
            bad = requests.post(url, json={"label": ATTACK}, timeout=30).status_code
            good = requests.post(url, json={"label": "aaa"}, timeout=30).status_code
        print(bad, good)
        """.replace("\n        ", "\n")
    )
    assert out.split() == ["400", "200"]


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
        import json
        from autofeedback import ApiCatalog, Scanner
        scanner = Scanner(ApiCatalog.from_tools([json.loads({json.dumps(json.dumps(tool))})]),
                          retriever=None)
        bad = scanner.scan({{"name": "tag", "arguments": {{"meta": {{{ATTACK!r}: 1}}}}}})
        good = scanner.scan({{"name": "tag", "arguments": {{"meta": {{"aaa": 1}}}}}})
        print(bad.code if bad else None, good)
        """
    )
    assert out.split() == ["E4.2", "None"]


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
        import json
        from autofeedback import ApiCatalog
        from autofeedback.sandbox import Sandbox, to_openapi
        catalog = ApiCatalog.from_tools([json.loads({json.dumps(json.dumps(tool))})])
        document = to_openapi(catalog)
        with Sandbox(catalog):
            pass
        print("example" in json.dumps(document))
        """
    )
    # returned (a stall fails in _run), and the example that breaks its schema dropped
    assert out.split() == ["False"]


def test_a_finding_from_the_bounded_matcher_says_so() -> None:
    tool = {
        "name": "pair",
        "parameters": {
            "type": "object",
            "properties": {
                "twice": {"type": "string", "pattern": r"^(\w+)-\1$"},
                "plain": {"type": "string", "pattern": r"^\w+$"},
            },
        },
    }
    scanner = Scanner(ApiCatalog.from_tools([tool]), retriever=None)
    assert scanner.scan({"name": "pair", "arguments": {"twice": "ab-ab"}}) is None
    bounded = scanner.scan({"name": "pair", "arguments": {"twice": "ab-cd"}})
    assert bounded is not None and bounded.code == "E4.2"
    assert "pattern checked with a bounded matcher" in bounded.message
    linear = scanner.scan({"name": "pair", "arguments": {"plain": "a b"}})
    assert linear is not None and "bounded" not in linear.message
