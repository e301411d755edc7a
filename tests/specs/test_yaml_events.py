"""The YAML builder from libyaml's events gives what ``yaml.load`` and ``_jsonify`` gave:
the same document (types, key order, shared anchors), the same errors, and the old path
for whatever it leaves (``Unusual``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autofeedback import SpecError
from autofeedback._specs import _yaml_events
from autofeedback._specs._text import _jsonify, _load_yaml_json, _loader, parse_text

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "specs"


def _same(a: Any, b: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, list)):
        seen = set() if seen is None else seen
        if (id(a), id(b)) in seen:
            return True  # a recursive alias: compared once
        seen.add((id(a), id(b)))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], seen) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _old(text: str) -> Any:
    """What a spec's YAML became before the builder: yaml.load, then _jsonify."""
    return _jsonify(yaml.load(text, Loader=_loader()), {})


def _outcome(load: Any, text: str) -> Any:
    try:
        return ("value", load(text))
    except Exception as exc:  # the error is part of the outcome compared
        return ("error", type(exc).__name__, str(exc))


def _assert_same(text: str) -> None:
    old, new = _outcome(_old, text), _outcome(lambda t: _load_yaml_json(t, "<t>"), text)
    if old[0] == "error" and new[0] == "error":
        # yaml's own errors pass through; a ValueError of the old path is a SpecError now
        # as it was in parse_text
        assert old[1:] == new[1:] or (old[1] == "ValueError" and new[1] == "SpecError")
        return
    assert old[0] == new[0] == "value", (old, new)
    assert _same(old[1], new[1]), (old[1], new[1])


BUILT = {
    "scalars of YAML 1.2 (bool only true/false, no timestamps)": (
        "a: [on, off, yes, no, y, n, true, True, TRUE, false, False, FALSE, 2020-01-31, "
        "2001-12-14t21:59:43.10-05:00]\n"
    ),
    "integers of YAML 1.1": "a: [0, 017, 0x1F, 0b101, 1_000, -12, +3, 190:20:30, 0o17]\n",
    "floats of YAML 1.1": (
        "a: [.5, 1.0, -1.5e+3, 1e3, .inf, -.Inf, .NaN, 6.8523015e+5, 190:20:30.15]\n"
    ),
    "nulls": "a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: ''\ng: 'null'\n",
    "quoted scalars stay strings": "a: '1'\nb: \"true\"\nc: '~'\nd: \"0x1F\"\n",
    "keys of every kind, as _jsonify writes them": (
        "200: ok\ntrue: yes\n~: nothing\n1.5: float\n'200': again\nnull: last\n"
    ),
    "a duplicate key: the last value, the first place": "a: 1\nb: 2\na: 3\n",
    "an int key and its string collide": "1: x\nb: y\n'1': z\n",
    "anchors and aliases": (
        "base: &b {type: string, enum: [a, b]}\nx: *b\ny: [*b, *b]\ns: &s 5\nt: *s\n"
    ),
    "an explicit !!str, !!map and !!seq": "a: !!str 5\nb: !!map {c: 1}\nd: !!seq [1]\n",
    "flow and block mixed, multi-line scalars": (
        "a: {b: [1, {c: d}], e: 'f'}\ng: |\n  line one\n  line two\nh: >\n  folded\n  text\n"
    ),
    "an empty document": "",
    "an explicit empty document": "---\n",
    "a scalar document": "just text\n",
    "a list document": "- 1\n- two\n",
    "a non-specific tag": "a: ! 5\n",
}

LEFT = {
    "a merge key": "base: &b {a: 1}\nx:\n  <<: *b\n  c: 2\n",
    "a value key '='": "a: =\n",
    "an explicit !!int": "a: !!int '5'\n",
    "!!binary": "a: !!binary aGVsbG8=\n",
    "!!set": "a: !!set {x, y}\n",
    "!!omap": "a: !!omap [x: 1, y: 2]\n",
    "a local tag": "a: !thing 5\n",
    "a mapping as a key": "? {a: 1}\n: b\n",
    "a sequence as a key": "? [a]\n: b\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "an undefined alias": "a: *nowhere\n",
    "an anchor defined twice": "a: &x 1\nb: &x 2\nc: *x\n",
    "a recursive alias": "a: &x [1, *x]\n",
    "a timestamp tag": "a: !!timestamp 2020-01-01\n",
}

ERRORS = {
    "a scanner error": "a: 'unterminated\n",
    "a parser error": "a: [1, 2\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "an integer of 5,000 digits": "a: " + "1" * 5000 + "\n",
}


@pytest.mark.parametrize("text", BUILT.values(), ids=list(BUILT))
def test_built_from_events_as_yaml_load_built_it(text: str) -> None:
    _assert_same(text)
    _yaml_events.load(text, _loader())  # and built here, not left to yaml.load


@pytest.mark.parametrize("text", LEFT.values(), ids=list(LEFT))
def test_what_it_leaves_to_yaml_load_gets_what_it_got(text: str) -> None:
    with pytest.raises(_yaml_events.Unusual):
        _yaml_events.load(text, _loader())
    _assert_same(text)


@pytest.mark.parametrize("text", ERRORS.values(), ids=list(ERRORS))
def test_errors_are_the_ones_yaml_load_raised(text: str) -> None:
    _assert_same(text)


def test_an_alias_is_the_same_object_as_its_anchor() -> None:
    doc = _yaml_events.load("a: &b {t: 1}\nc: *b\nd: [*b]\n", _loader())
    assert doc["c"] is doc["a"] and doc["d"][0] is doc["a"]


def test_a_mapping_key_that_is_a_yaml_error_still_reads_as_invalid_yaml() -> None:
    with pytest.raises(SpecError, match="invalid YAML"):
        parse_text("a: [1, 2\n", "<t>")
    with pytest.raises(SpecError, match="a value cannot be read"):
        parse_text("a: " + "1" * 5000 + "\n", "<t>")


def test_the_project_specs_and_the_shared_ones_load_as_before() -> None:
    files = sorted(ROOT.glob("specs/**/*.yaml")) + sorted(ROOT.glob("tests/**/*.yaml"))
    if SHARED.is_dir():
        files += sorted(SHARED.glob("*.yaml"))
    assert files
    for path in files:
        _assert_same(path.read_text(encoding="utf-8"))


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["on", "no", "~", "0x1F", "1_0", "017", "1:30", ".inf", "<<", "=", "y"]),
)
_keys = st.one_of(st.text(max_size=8), st.integers(-5, 500), st.booleans(), st.none())
_documents = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    document=_documents,
    flow=st.sampled_from([None, True, False]),
    style=st.sampled_from([None, "'", '"']),
)
def test_any_document_yaml_writes_reads_as_yaml_load_read_it(
    document: Any, flow: bool | None, style: str | None
) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, default_style=style, sort_keys=False)
    _assert_same(text)
