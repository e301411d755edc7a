"""Programs: call sequences with variables, as GraphQL-RestBench writes them.

::

    r = GET_search_movie(query="Titanic")
    GET_movie__movie_id__credits(movie_id=r.results[0].id)

A program is read with :mod:`ast` and never executed. Each call becomes a
:class:`~autofeedback.flow._sequence.Step` whose argument values are either literals or
:class:`Ref` values: "the field ``results[].id`` of the response bound to ``r``".
List comprehensions (``[t.id for t in r.tracks.items]``), ``",".join(...)``, f-strings and
string concatenation are followed to the references inside them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback._findings import Finding
from autofeedback._model import ApiRequest

__all__ = ["Derived", "Ref", "Unbound", "parse_program", "path_text"]

#: An item of an array (an index, a slice or an iteration), in a reference path.
ITEM = "[]"


@dataclass(frozen=True)
class Ref:
    """A read of an earlier response: ``var`` bound by step ``step``, then ``path``.

    ``path`` holds field names and :data:`ITEM` for an array item, e.g.
    ``("results", "[]", "id")`` for ``r.results[0].id``. ``many`` is true when the value
    is a list of such fields (a comprehension over an array).

    >>> path_text(Ref("r", 0, ("results", "[]", "id")).path)
    'results[].id'
    """

    var: str
    step: int
    path: tuple[str, ...] = ()
    many: bool = False
    text: str = ""


@dataclass(frozen=True)
class Unbound:
    """A name that nothing earlier in the program assigned (E5.1)."""

    name: str
    text: str = ""


@dataclass(frozen=True)
class Derived:
    """A value computed from references: a join, an f-string, a concatenation.

    ``kind`` is ``"string"`` when the result is text whatever the references hold
    (``",".join(...)``, f-strings), else ``"value"``.
    """

    kind: str
    parts: tuple[Ref | Unbound, ...] = ()
    text: str = ""


Value = Any  # a JSON literal, or Ref / Unbound / Derived


def path_text(path: tuple[str, ...]) -> str:
    """``("results", "[]", "id")`` -> ``'results[].id'``."""
    out = ""
    for step in path:
        out += step if step == ITEM else (f".{step}" if out else step)
    return out


@dataclass
class _Scope:
    variables: dict[str, int] = field(default_factory=dict)
    # comprehension targets: name -> (the Ref it iterates, with ITEM appended)
    loops: dict[str, Ref] = field(default_factory=dict)


class _Reader:
    def __init__(self, scope: _Scope) -> None:
        self.scope = scope

    def value(self, node: ast.expr) -> Value:
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        text = ast.unparse(node)
        chain = self._chain(node)
        if chain is not None:
            return chain
        if isinstance(node, ast.ListComp) and len(node.generators) >= 1:
            return self._comprehension(node, text)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.ListComp):
            inner = self._comprehension(node.value, text)
            if isinstance(inner, Ref):
                return Ref(inner.var, inner.step, inner.path, many=False, text=text)
            return inner
        if isinstance(node, ast.Call) and _is_join(node):
            return Derived("string", self._refs(node.args[0]), text)
        if isinstance(node, ast.JoinedStr):
            parts: list[Ref | Unbound] = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    parts.extend(self._refs(v.value))
            return Derived("string", tuple(parts), text)
        return Derived("value", self._child_refs(node), text)

    def _refs(self, node: ast.expr) -> tuple[Ref | Unbound, ...]:
        value = self.value(node)
        if isinstance(value, (Ref, Unbound)):
            return (value,)
        if isinstance(value, Derived):
            return value.parts
        return ()

    def _child_refs(self, node: ast.expr) -> tuple[Ref | Unbound, ...]:
        """The references inside an expression the reader does not follow as a whole
        (each child is smaller, so this ends)."""
        out: list[Ref | Unbound] = []
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr) and not isinstance(child, ast.Constant):
                if isinstance(node, ast.Call) and child is node.func:
                    continue
                out.extend(self._refs(child))
        return tuple(out)

    def _chain(self, node: ast.expr) -> Ref | Unbound | None:
        """``r.a[0].b`` -> Ref("r", step, ("a", "[]", "b")); None when not a plain chain."""
        path: list[str] = []
        text = ast.unparse(node)
        while True:
            if isinstance(node, ast.Attribute):
                path.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Subscript):
                key = node.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    path.append(key.value)  # r["results"] reads a field
                elif isinstance(key, ast.Slice):
                    pass  # items[:3] is still the array
                else:
                    path.append(ITEM)
                node = node.value
            elif isinstance(node, ast.Name):
                break
            else:
                return None
        path.reverse()
        name = node.id
        if name in self.scope.loops:
            base = self.scope.loops[name]
            return Ref(base.var, base.step, base.path + tuple(path), text=text)
        if name in self.scope.variables:
            return Ref(name, self.scope.variables[name], tuple(path), text=text)
        return Unbound(name, text)

    def _comprehension(self, node: ast.ListComp, text: str) -> Value:
        saved = dict(self.scope.loops)
        try:
            for gen in node.generators:
                source = self.value(gen.iter)
                if isinstance(source, Unbound):
                    return source
                if isinstance(source, Ref) and isinstance(gen.target, ast.Name):
                    self.scope.loops[gen.target.id] = Ref(
                        source.var, source.step, (*source.path, ITEM), text=source.text
                    )
                elif isinstance(source, Ref) and isinstance(gen.target, ast.Tuple):
                    continue  # enumerate/zip style targets: the items are not followed
            element = self.value(node.elt)
        finally:
            self.scope.loops = saved
        if isinstance(element, Ref):
            return Ref(element.var, element.step, element.path, many=True, text=text)
        return element if isinstance(element, (Unbound, Derived)) else Derived("value", (), text)


def _is_join(node: ast.Call) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "join"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
        and len(node.args) == 1
    )


@dataclass(frozen=True)
class ProgramCall:
    """One call of a program: its name, keyword arguments, positional arguments and the
    variable its result is bound to."""

    name: str
    arguments: Mapping[str, Value]
    positional: tuple[Value, ...] = ()
    variable: str | None = None
    line: int = 0
    text: str = ""


def parse_program(text: str) -> tuple[list[ProgramCall], list[Finding]]:
    """The calls of a program, in order, and an E1 finding for each statement that is not
    a call (or not readable at all).

    >>> calls, problems = parse_program('r = S(q="x")\\nD(id=r.results[0].id)')
    >>> calls[1].arguments["id"].path, problems
    (('results', '[]', 'id'), [])
    """
    try:
        tree = ast.parse(text.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        msg = getattr(exc, "msg", None) or type(exc).__name__
        return [], [Finding("E1", (), text[:200], message=f"the program cannot be parsed: {msg}")]
    scope = _Scope()
    reader = _Reader(scope)
    calls: list[ProgramCall] = []
    problems: list[Finding] = []
    for stmt in tree.body:
        target: str | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            if isinstance(stmt.targets[0], ast.Name):
                target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.Expr):
            value = stmt.value
        if not isinstance(value, ast.Call) or _callee(value.func) is None:
            where = (f"line[{stmt.lineno}]",)
            problems.append(
                Finding(
                    "E1",
                    where,
                    ast.unparse(stmt)[:200],
                    message="not a call: each line must be NAME(key=value, ...) or var = NAME(...)",
                )
            )
            continue
        arguments = {kw.arg: reader.value(kw.value) for kw in value.keywords if kw.arg}
        positional = tuple(reader.value(a) for a in value.args)
        name = _callee(value.func)
        assert name is not None
        calls.append(
            ProgramCall(name, arguments, positional, target, stmt.lineno, ast.unparse(value))
        )
        if target is not None:
            scope.variables[target] = len(calls) - 1
    return calls, problems


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and _callee(func.value) is not None:
        return ast.unparse(func)
    return None


def literal_request(call: ProgramCall) -> ApiRequest:
    """The call as a request holding only its literal arguments (references left out)."""
    args = {k: v for k, v in call.arguments.items() if not isinstance(v, (Ref, Unbound, Derived))}
    return ApiRequest(name=call.name, arguments=args, format="python", raw=call.text)


def is_literal(value: Value) -> bool:
    return not isinstance(value, (Ref, Unbound, Derived))
