"""GraphQL-RestBench's four program metrics (Saha et al., EMNLP 2024, "Sequential API
Function Calling Using GraphQL Schema"), to score any model's programs against gold.

The dataset's repository ships the data only, not its evaluation code, so the metrics are
implemented from the paper's description:

* **Arg Match (full)**: the program calls exactly the gold functions, each with exactly
  the gold arguments (1 or 0 per sample);
* **Arg Match (per function)**: the share of calls whose arguments match, pairing
  predicted and gold calls of the same function in order, over the larger of the two
  call counts (extra or missing calls count against it);
* **Seq Match (full)**: the sequence of function names equals the gold one;
* **Seq Match (connected subsequences)**: gold calls joined by variable mapping form
  connected subsequences (a search and the detail call that reads its result); the share
  of them whose function names occur, in order, in the predicted sequence.

Arguments are compared after normalisation, so programs that differ only in naming match:
a variable is replaced by the function whose result it holds, comprehension variables by
their position, keyword order does not matter, and literals are compared as values
(``"Titanic"`` and ``'Titanic'`` are the same), and an intermediate value stands for what
it holds (``mid = r.results[0].id`` then ``D(movie_id=mid)`` is ``D(movie_id=r.results[0].id)``);
the calls inside loops and branches count in order. Programs are read with :mod:`ast`, never run;
a program that does not parse as a whole is read line by line (an unreadable line is
lost), and one with no readable call scores 0 on every metric.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ArgumentDifference",
    "ProgramScores",
    "argument_differences",
    "score_program",
    "score_programs",
]


@dataclass(frozen=True)
class ProgramScores:
    """The four metrics, each in [0, 1] (a mean over samples for :func:`score_programs`)."""

    arg_match_full: float
    arg_match_per_function: float
    seq_match_full: float
    seq_match_connected: float
    samples: int = 1

    def as_dict(self) -> dict[str, float]:
        return {
            "arg_match_full": self.arg_match_full,
            "arg_match_per_function": self.arg_match_per_function,
            "seq_match_full": self.seq_match_full,
            "seq_match_connected": self.seq_match_connected,
        }


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[tuple[str, str], ...]
    uses: frozenset[int]  # indices of earlier calls whose results it reads


class _Normaliser(ast.NodeTransformer):
    def __init__(
        self,
        variables: dict[str, tuple[int, str]],
        aliases: dict[str, tuple[ast.expr, frozenset[int]]] | None = None,
    ) -> None:
        self.variables = variables
        self.aliases = aliases or {}
        self.locals: dict[str, str] = {}
        self.uses: set[int] = set()

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.locals:
            return ast.copy_location(ast.Name(self.locals[node.id], node.ctx), node)
        held = self.aliases.get(node.id)
        if held is not None:  # an intermediate value: what it holds, already normalised
            self.uses.update(held[1])
            return copy.deepcopy(held[0])
        hit = self.variables.get(node.id)
        if hit is not None:
            self.uses.add(hit[0])
            return ast.copy_location(ast.Name(f"{hit[1]}#{hit[0]}", node.ctx), node)
        return node

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        return self._comprehension(node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        return self._comprehension(node)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> ast.AST:
        saved = dict(self.locals)
        for gen in node.generators:
            gen.iter = self.visit(gen.iter)
            for target in ast.walk(gen.target):
                if isinstance(target, ast.Name):
                    self.locals[target.id] = f"_v{len(self.locals)}"
            gen.target = self.visit(gen.target)
            gen.ifs = [self.visit(cond) for cond in gen.ifs]
        node.elt = self.visit(node.elt)
        self.locals = saved
        return node


def _value(node: ast.expr, normaliser: _Normaliser) -> str:
    try:
        return repr(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast.unparse(normaliser.visit(node))


def _parse(program: str) -> list[ast.stmt] | None:
    """The statements of a program; line by line when the whole does not parse (a stray
    parenthesis on one line loses that line, not the program)."""
    try:
        return ast.parse(program.strip()).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    body: list[ast.stmt] = []
    for line in program.splitlines():
        try:
            body.extend(ast.parse(line.strip()).body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return body or None


def _flat(body: list[ast.stmt], depth: int = 0) -> list[ast.stmt]:
    """The statements of a program with the bodies of loops and branches in place, in
    order (``for t in r.items: GET_x(id=t.id)`` contributes its call)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if depth < 16 and isinstance(stmt, (ast.For, ast.If, ast.While, ast.With)):
            out.extend(_flat(stmt.body, depth + 1))
            out.extend(_flat(getattr(stmt, "orelse", []), depth + 1))
        else:
            out.append(stmt)
    return out


def _calls(program: str) -> list[_Call] | None:
    body = _parse(program)
    if body is None:
        return None
    variables: dict[str, tuple[int, str]] = {}
    aliases: dict[str, tuple[ast.expr, frozenset[int]]] = {}
    calls: list[_Call] = []
    for stmt in _flat(body):
        target = None
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            target = stmt.targets[0].id
        if value is not None and not isinstance(value, ast.Call):
            root = value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Call):
                value = root  # x = F(...).genre_ids: a call of F all the same
        if not isinstance(value, ast.Call):
            if target is not None and value is not None:
                # movie_id = r.results[0].id: later uses compare as r.results[0].id
                normaliser = _Normaliser(variables, aliases)
                try:
                    held = normaliser.visit(copy.deepcopy(value))
                except RecursionError:
                    continue
                aliases[target] = (held, frozenset(normaliser.uses))
                variables.pop(target, None)
            continue
        name = ast.unparse(value.func)
        if name == "print":
            continue  # output, not a call of the API
        normaliser = _Normaliser(variables, aliases)
        args = [(f"#{i}", _value(a, normaliser)) for i, a in enumerate(value.args)]
        args += [(kw.arg or "**", _value(kw.value, normaliser)) for kw in value.keywords]
        calls.append(_Call(name, tuple(sorted(args)), frozenset(normaliser.uses)))
        if target is not None:
            variables[target] = (len(calls) - 1, name)
            aliases.pop(target, None)
    return calls


def _components(calls: list[_Call]) -> list[list[str]]:
    """Connected subsequences: calls joined by data flow, each in program order."""
    parent = list(range(len(calls)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, call in enumerate(calls):
        for j in call.uses:
            if 0 <= j < len(calls):
                parent[find(i)] = find(j)
    groups: dict[int, list[str]] = {}
    for i, call in enumerate(calls):
        groups.setdefault(find(i), []).append(call.name)
    return list(groups.values())


def _in_order(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(name == h for h in it) for name in needle)


def _paired(want: list[_Call], got: list[_Call]) -> list[tuple[_Call, _Call | None]]:
    """Each gold call with the predicted call of the same function it is judged against:
    the k-th ``S`` of the prediction with the k-th ``S`` of the gold (None: none left)."""
    pool: dict[str, list[_Call]] = {}
    for c in got:
        pool.setdefault(c.name, []).append(c)
    return [(c, pool[c.name].pop(0) if pool.get(c.name) else None) for c in want]


def score_program(predicted: str, gold: str) -> ProgramScores:
    """The four metrics for one predicted program against its gold program.

    >>> gold = 'r = S(query="Titanic")\\nD(movie_id=r.results[0].id)'
    >>> same = score_program("x = S(query='Titanic')\\nD(movie_id=x.results[0].id)", gold)
    >>> sorted(set(same.as_dict().values()))
    [1.0]
    >>> score_program('D(movie_id=550)', gold).seq_match_connected
    0.0
    """
    want = _calls(gold)
    if want is None:
        raise ValueError("the gold program cannot be parsed")
    got = _calls(predicted)
    if got is None:
        return ProgramScores(0.0, 0.0, 0.0, 0.0)
    names_got = [c.name for c in got]
    names_want = [c.name for c in want]
    matched = sum(mine is not None and mine.args == c.args for c, mine in _paired(want, got))
    total = max(len(got), len(want))
    per_function = matched / total if total else 1.0
    full = float(names_got == names_want and matched == len(want))
    components = _components(want)
    connected = (
        sum(_in_order(comp, names_got) for comp in components) / len(components)
        if components
        else float(not got)
    )
    return ProgramScores(full, per_function, float(names_got == names_want), connected)


@dataclass(frozen=True)
class ArgumentDifference:
    """Why a call of a gold function misses Arg Match: an argument gold does not send
    (``"extra"``), one it sends that the call leaves out (``"missing"``), or the same
    argument with another value (``"value"``)."""

    kind: str
    function: str
    argument: str


def argument_differences(predicted: str, gold: str) -> list[ArgumentDifference]:
    """How the calls of ``predicted`` differ in their arguments from the gold calls of
    the same function, paired in order as Arg Match pairs them; empty when a program
    cannot be read.

    >>> gold = 'r = S(query="Titanic")\\nD(movie_id=r.results[0].id)'
    >>> pred = "r = S(query='Titanic', page=1)\\nD(movie_id=550)"
    >>> [(d.kind, d.argument) for d in argument_differences(pred, gold)]
    [('extra', 'page'), ('value', 'movie_id')]
    """
    want, got = _calls(gold), _calls(predicted)
    if want is None or got is None:
        return []
    out: list[ArgumentDifference] = []
    for c, call in _paired(want, got):
        if call is None:
            continue
        mine, theirs = dict(call.args), dict(c.args)
        for name in sorted(mine.keys() | theirs.keys()):
            if name not in theirs:
                out.append(ArgumentDifference("extra", c.name, name))
            elif name not in mine:
                out.append(ArgumentDifference("missing", c.name, name))
            elif mine[name] != theirs[name]:
                out.append(ArgumentDifference("value", c.name, name))
    return out


def score_programs(pairs: Iterable[tuple[str, str]]) -> ProgramScores:
    """The mean of :func:`score_program` over ``(predicted, gold)`` pairs.

    >>> score_programs([("f(a=1)", "f(a=1)"), ("f(a=2)", "f(a=1)")]).arg_match_full
    0.5
    """
    rows = [score_program(p, g) for p, g in pairs]
    if not rows:
        raise ValueError("no programs to score")
    n = len(rows)
    return ProgramScores(
        sum(r.arg_match_full for r in rows) / n,
        sum(r.arg_match_per_function for r in rows) / n,
        sum(r.seq_match_full for r in rows) / n,
        sum(r.seq_match_connected for r in rows) / n,
        samples=n,
    )
