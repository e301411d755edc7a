"""Which library should make the sandbox's values: rstr, or Hypothesis?

The sandbox makes a value while a request waits, and the same seed must give the same
value. For a few id and code patterns this draws 200 values with each peer from a fixed
seed and reports the time of the first value (warm-up included), the time per value
after it, how many of the 200 differ, whether they all match the pattern, and whether
the same seed gives the same values again:

* ``rstr``: ``rstr.Rstr(random.Random(seed)).xeger(pattern)`` (what the sandbox uses,
  through :func:`autofeedback.serve._sandbox_values.from_pattern`);
* Hypothesis ``from_regex``: the only public way to draw from a given seed outside a
  test is to run one, ``@seed(n) @settings(max_examples=k) @given(from_regex(...))``;
* hypothesis-jsonschema ``from_schema`` on an object schema, the same way (if installed).

    python benchmarks/sandbox_values.py             # prints the table, writes RESULTS.md
    python benchmarks/sandbox_values.py --no-write
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback.serve._sandbox_values import from_pattern
from benchmarks._results import write_section

PATTERNS = (
    r"^evt_[a-z0-9]{6}$",
    r"^ORD-[0-9]{6}$",
    r"^[A-Z]{2}-\d{4}$",
    r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
)
N = 200


def with_rstr(pattern: str, seed: int) -> tuple[list[str], float, float, float]:
    """``(values, first value s, one value from a fresh seed s, per value in a batch s)``."""
    start = time.perf_counter()
    from_pattern(pattern, random.Random(seed))
    first_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(20):
        from_pattern(pattern, random.Random(seed + i))
    one = (time.perf_counter() - start) / 20
    rng = random.Random(seed)
    start = time.perf_counter()
    values = [from_pattern(pattern, rng) for _ in range(N)]
    per = (time.perf_counter() - start) / N
    return [v for v in values if v is not None], first_s, one, per


def with_hypothesis(strategy: Any, seed: int, n: int) -> list[Any]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    out: list[Any] = []

    @settings(
        max_examples=n,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @seeded(seed)
    @given(strategy)
    def draw(value: Any) -> None:
        out.append(value)

    draw()
    return out


def hypothesis_regex(pattern: str, seed: int) -> tuple[list[str], float, float, float]:
    from hypothesis import strategies as st

    strategy = st.from_regex(pattern, fullmatch=True)
    start = time.perf_counter()
    with_hypothesis(strategy, seed, 1)
    first_s = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(20):
        with_hypothesis(strategy, seed + i, 1)
    one = (time.perf_counter() - start) / 20
    start = time.perf_counter()
    values = with_hypothesis(strategy, seed, N)
    per = (time.perf_counter() - start) / max(len(values), 1)
    return values, first_s, one, per


def hypothesis_jsonschema() -> str:
    try:
        from hypothesis_jsonschema import from_schema
    except ImportError:
        return "not installed"
    schema = {
        "type": "object",
        "required": ["id", "name"],
        "properties": {"id": {"type": "string", "format": "uuid"}, "name": {"type": "string"}},
    }
    try:
        values = with_hypothesis(from_schema(schema), 0, 20)
    except Exception as exc:  # what it raises is the finding
        return f"fails: {type(exc).__name__}: {exc}"[:160]
    return f"works: {len(values)} objects"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    lines = [
        "| pattern | peer | first value ms | one value from a seed ms | per value in a batch us "
        "| distinct of 200 | all match | same seed, same values |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for pattern in PATTERNS:
        for name, draw in (("rstr", with_rstr), ("hypothesis from_regex", hypothesis_regex)):
            values, first_s, one, per = draw(pattern, 7)
            again = draw(pattern, 7)[0]
            ok = all(re.search(pattern, v) for v in values)
            lines.append(
                f"| `{pattern}` | {name} | {first_s * 1000:.1f} | {one * 1000:.2f} | "
                f"{per * 1e6:.0f} | "
                f"{len(set(values))} | {'yes' if ok else 'no'} | "
                f"{'yes' if values == again else 'no'} |"
            )
    import hypothesis

    lines += [
        "",
        f"hypothesis-jsonschema on an object schema (Hypothesis {hypothesis.__version__}): "
        f"{hypothesis_jsonschema()}.",
        "",
        "*First value*: the first draw in this process (Hypothesis starts its engine; the "
        "sandbox would pay it on its first request). *One value from a seed*: what each "
        "request would pay (rstr: a fresh `Random`; Hypothesis: a whole `@seed`/`@given` "
        "run of one example), mean of 20. *Per value in a batch*: 200 values from one seed. "
        "Hypothesis draws the simplest values first (`evt_000000`). Shared 2-core VM: "
        "compare the peers, not absolute times.",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(
            "Sandbox values: rstr against Hypothesis", "python benchmarks/sandbox_values.py", body
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
