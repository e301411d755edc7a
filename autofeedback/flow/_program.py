"""Programs: call sequences with variables, as GraphQL-RestBench writes them.

::

    r = GET_search_movie(query="Titanic")
    GET_movie__movie_id__credits(movie_id=r.results[0].id)

A program is read with :mod:`ast` and never executed. Each call becomes a
:class:`~autofeedback.flow._sequence.Step` whose argument values are either literals or
:class:`Ref` values: "the field ``results[].id`` of the response bound to ``r``".
List comprehensions (``[t.id for t in r.tracks.items]``), ``",".join(...)``, f-strings and
string concatenation are followed to the references inside them.

Models write more than one call per line. These are read too, as a programmer would read
them, still without running anything:

* an intermediate value (``movie_id = r.results[0].id``, ``q = "Dune"``) stands for what it
  holds wherever it is used;
* a ``for`` loop over a response (``for t in r.items: GET_track(id=t.id)``) and the
  branches of an ``if`` contribute their calls, in order;
* a call read straight from (``n = GET_x().total``), or appended to a list
  (``out.append(GET_x(...))``), is a call; ``print(...)``, bare strings and a value
  shown alone (``r.results[0].id`` on its own line) are not;
* ``**{"vote_average.gte": 7}`` passes parameters whose names no keyword can spell;
* ``get-book(book_id=1)``, written with no space around its hyphens, is the call of the
  tool ``get-book`` (Python alone would read ``get - book(book_id=1)``).

Anything else (an import, a ``def``, a call to something that is not a function of the
API) stays an E1 finding for that line, and so does an API call written inside an
expression (``x = 1 + F(...)``, a loop's or a branch's condition, a comprehension, an
argument's value): no step reads it, so nothing would check it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autofeedback.core._findings import Finding
from autofeedback.core._model import ApiRequest
from autofeedback.flow._statements import program_statements, unparsable

__all__ = ["CallSpans", "Derived", "Ref", "Unbound", "parse_program", "path_text", "reads_at"]

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

    def __post_init__(self) -> None:
        # Each distinct reference once, and at most MAX_PARTS of them: `v2 = [v1, v1]`
        # line after line doubled the parts (24 lines: 16 million references, 43 s and
        # 450 MB in scan, the audit and the loop). A repeated reference checks nothing new.
        parts = tuple(dict.fromkeys(self.parts))
        if len(parts) > MAX_PARTS:
            parts = parts[:MAX_PARTS]
        if parts != self.parts:
            object.__setattr__(self, "parts", parts)


#: The most references one computed value keeps (distinct ones, in the order written).
MAX_PARTS = 64

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
    # comprehension and for-loop targets: name -> (the Ref it iterates, with ITEM appended)
    loops: dict[str, Ref] = field(default_factory=dict)
    # intermediate values: name -> what it holds (a literal, Ref, Unbound or Derived)
    aliases: dict[str, Any] = field(default_factory=dict)

    def bind_call(self, name: str, step: int) -> None:
        self.aliases.pop(name, None)
        self.loops.pop(name, None)
        self.variables[name] = step

    def bind_value(self, name: str, value: Any) -> None:
        self.variables.pop(name, None)
        self.loops.pop(name, None)
        self.aliases[name] = value


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
        if isinstance(chain, _Literal):
            return chain.value
        if chain is not None:
            return chain
        root = _chain_root(node)
        if root is not None and root.id in self.scope.aliases:  # d["a"] of a literal alias
            held = self.scope.aliases[root.id]
            return Derived("value", held.parts if isinstance(held, Derived) else (), text)
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

    def _chain(self, node: ast.expr) -> Value:
        """``r.a[0].b`` -> Ref("r", step, ("a", "[]", "b")); None when not a plain chain.

        A name holding an intermediate value is that value (a literal when it holds one,
        and no path is read from it)."""
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
        if name in self.scope.aliases:
            held = self.scope.aliases[name]
            if isinstance(held, Ref):
                if not path:  # the name alone: the read it was assigned, as written there
                    return held
                return Ref(held.var, held.step, held.path + tuple(path), text=text)
            if isinstance(held, Unbound):
                return held
            if not path:
                return held if isinstance(held, Derived) else _Literal(held)
            return None
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


@dataclass(frozen=True)
class _Literal:
    """A literal held by a name (``q = "Dune"``), told apart from "not a chain"."""

    value: Any


def _chain_root(node: ast.expr) -> ast.Name | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _call_root(node: ast.expr) -> ast.Call | None:
    """The call a chain reads from: ``GET_x(...).results[0].id`` -> ``GET_x(...)``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node if isinstance(node, ast.Call) else None


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
class CallSpans:
    """Where a call is written in the program text, as ``(start, end)`` character
    offsets: the whole call, its function name, each ``keyword=value`` and each value
    (by keyword). What a repair rewrites (:mod:`autofeedback.decide`)."""

    call: tuple[int, int]
    func: tuple[int, int]
    keywords: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    values: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ProgramCall:
    """One call of a program: its name, keyword arguments, positional arguments and the
    variable its result is bound to; ``spans`` says where it is written."""

    name: str
    arguments: Mapping[str, Value]
    positional: tuple[Value, ...] = ()
    variable: str | None = None
    line: int = 0
    text: str = ""
    spans: CallSpans | None = field(default=None, compare=False)


def parse_program(text: str) -> tuple[list[ProgramCall], list[Finding]]:
    """The calls of a program, in order, and an E1 finding for each statement that is not
    a call (or not readable at all).

    >>> calls, problems = parse_program('r = S(q="x")\\nD(id=r.results[0].id)')
    >>> calls[1].arguments["id"].path, problems
    (('results', '[]', 'id'), [])
    """
    body, unreadable = program_statements(text)
    if not body and unreadable:
        # nothing readable at all: one finding for the whole text, as before
        return [], [unparsable((), text, unreadable[0][2])]
    offsets = _Offsets(text)
    hyphens = _HyphenCalls(offsets)
    body = [hyphens.visit(stmt) for stmt in body]
    program = _Program(offsets)
    pending = sorted(unreadable, key=lambda u: u[0])
    for stmt in body:
        # each unreadable part is reported where it stands among the calls
        while pending and pending[0][0] < stmt.lineno:
            line, part, exc = pending.pop(0)
            program.problems.append(unparsable((f"line[{line}]",), part, exc))
        program.block([stmt])
    for line, part, exc in pending:
        program.problems.append(unparsable((f"line[{line}]",), part, exc))
    program.unread_calls(body)
    program.problems.sort(key=_line_of)  # in the program's order, the unread calls too
    return program.calls, program.problems


class _HyphenCalls(ast.NodeTransformer):
    """``get-book(book_id=1)``, which Python reads as ``get - book(book_id=1)``, as the call
    of the tool named ``get-book`` (MCP tools are often named so): where the names and
    hyphens are written with no space between them, as no subtraction is."""

    def __init__(self, offsets: _Offsets) -> None:
        self.offsets = offsets

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        call = self._call(node)
        return self.generic_visit(node) if call is None else self.generic_visit(call)

    def _call(self, node: ast.BinOp) -> ast.Call | None:
        right = node.right
        if not (
            isinstance(node.op, ast.Sub)
            and isinstance(right, ast.Call)
            and isinstance(right.func, ast.Name)
        ):
            return None
        names = [right.func.id]
        left: ast.expr = node.left
        while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Sub):
            if not isinstance(left.right, ast.Name):
                return None
            names.append(left.right.id)
            left = left.left
        if not isinstance(left, ast.Name):
            return None
        name = "-".join([left.id, *reversed(names)])
        start, end = self.offsets.span(left), self.offsets.span(right.func)
        if start is None or end is None or self.offsets.text[start[0] : end[1]] != name:
            return None  # a - b(x), spaced: a subtraction
        func = ast.Name(name, ast.Load())
        call = ast.Call(func, right.args, right.keywords)
        for made, last in ((func, right.func), (call, right)):
            made.lineno, made.col_offset = left.lineno, left.col_offset
            made.end_lineno, made.end_col_offset = last.end_lineno, last.end_col_offset
        return call


def _line_of(finding: Finding) -> int:
    where = finding.location[0] if finding.location else ""
    return int(where[5:-1]) if where.startswith("line[") else 0


#: calls that are output, not API calls: their arguments are still read for API calls
_OUTPUT = frozenset({"print"})
#: how the E1 of an API call no step reads begins (:meth:`_Program.unread_calls`)
UNREAD_CALL = "a call inside an expression is not read as a step"
#: list and set methods a program collects results with (``out.append(GET_x(...))``)
_COLLECT = frozenset({"append", "extend", "add", "insert", "update"})
#: loops and branches nest; deeper than this a program is not one a model meant
_MAX_NESTING = 16


class _Offsets:
    """Character offsets into a program's text for :mod:`ast` positions, which count
    lines of the stripped text and UTF-8 bytes within a line."""

    def __init__(self, text: str) -> None:
        self.text = text
        start = len(text) - len(text.lstrip())
        stripped = text.strip()
        self.starts: list[int] = []
        at = start
        for line in stripped.split("\n"):
            self.starts.append(at)
            at += len(line) + 1
        self.lines = stripped.split("\n")

    def at(self, lineno: int | None, col: int | None) -> int | None:
        if lineno is None or col is None or not 0 < lineno <= len(self.lines):
            return None
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int] | None:
        start = self.at(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        end = self.at(getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
        return None if start is None or end is None else (start, end)


class _Program:
    def __init__(self, offsets: _Offsets | None = None) -> None:
        self.offsets = offsets
        self.scope = _Scope()
        self.reader = _Reader(self.scope)
        self.calls: list[ProgramCall] = []
        self.problems: list[Finding] = []
        #: the call nodes read: as steps, or as a list the program collects into
        self.read: set[int] = set()

    def block(self, body: list[ast.stmt], depth: int = 0) -> None:
        for stmt in body:
            if depth > _MAX_NESTING:
                self._not_a_call(stmt)
                return
            self.statement(stmt, depth)

    def statement(self, stmt: ast.stmt, depth: int) -> None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # a bare string: a comment
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is not None and len(targets) == 1:
                self.assign(stmt, targets[0], stmt.value)
                return
        elif isinstance(stmt, ast.Expr):
            if self.expression(stmt, stmt.value):
                return
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.loop(stmt, depth)
            return
        elif isinstance(stmt, (ast.If, ast.While)):
            self.block(stmt.body, depth + 1)
            self.block(stmt.orelse, depth + 1)
            return
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.block(stmt.body, depth + 1)
            return
        elif isinstance(stmt, ast.Try):
            self.block(stmt.body, depth + 1)
            for handler in stmt.handlers:
                self.block(handler.body, depth + 1)
            self.block(stmt.orelse, depth + 1)
            self.block(stmt.finalbody, depth + 1)
            return
        elif isinstance(stmt, ast.Pass):
            return
        self._not_a_call(stmt)

    def assign(self, stmt: ast.stmt, target: ast.expr, value: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            if isinstance(value, ast.Call) and _callee(value.func) is not None:
                self._not_a_call(stmt)  # a, b = F(): the result is not followed
            elif isinstance(target, (ast.Tuple, ast.List)):
                held = self.reader.value(value)  # a, b = r.x, r.y: each a value read
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        parts = _parts(held)
                        self.scope.bind_value(name.id, Derived("value", parts, ast.unparse(value)))
            else:
                self._not_a_call(stmt)  # x.y = ... or d[k] = ...
            return
        if isinstance(value, ast.Call) and _callee(value.func) is not None:
            if self._collects(value):
                self.expression(stmt, value)
                return
            if not _is_api_call(value):  # n = len(r.items): a value computed from refs
                self._nested_calls(value)
                self.scope.bind_value(target.id, self.reader.value(value))
                return
            if _callee(value.func) in _OUTPUT:
                self._nested_calls(value)
                self.scope.bind_value(target.id, Derived("value", (), ast.unparse(value)))
                return
            self.call(stmt, value, target.id)
            return
        root = _call_root(value)
        if root is not None and _callee(root.func) is not None and root is not value:
            # n = GET_x(...).total: the call, then the value read from its result
            hidden = f"_{target.id}_result"
            self.call(stmt, root, hidden)
            held = self.reader.value(_rebase(value, hidden))
            self.scope.bind_value(target.id, held)
            return
        self.scope.bind_value(target.id, self.reader.value(value))

    def expression(self, stmt: ast.stmt, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call) or _callee(value.func) is None:
            root = _call_root(value)
            if root is not None and _callee(root.func) is not None:
                self.call(stmt, root, None)  # GET_x(...).results: the result is dropped
                return True
            # r.logos[0].id alone: the value the program ends on, shown, not a call
            return not any(isinstance(n, ast.Call) for n in ast.walk(value))
        if self._collects(value):
            self._nested_calls(value)
            self._collect(value)
            return True
        if _callee(value.func) in _OUTPUT:
            self._nested_calls(value)
            return True
        self.call(stmt, value, None)
        return True

    def loop(self, stmt: ast.For | ast.AsyncFor, depth: int) -> None:
        source = self.reader.value(stmt.iter)
        saved = dict(self.scope.loops)
        if isinstance(source, Ref):
            for name in ast.walk(stmt.target):
                if isinstance(name, ast.Name):
                    item = Ref(source.var, source.step, (*source.path, ITEM), text=source.text)
                    self.scope.loops[name.id] = item
                    self.scope.aliases.pop(name.id, None)
                    self.scope.variables.pop(name.id, None)
        elif isinstance(stmt.target, ast.Name):
            parts = _parts(source)
            self.scope.bind_value(stmt.target.id, Derived("value", parts, ast.unparse(stmt.iter)))
        try:
            self.block(stmt.body, depth + 1)
            self.block(stmt.orelse, depth + 1)
        finally:
            self.scope.loops = saved

    def call(self, stmt: ast.stmt, value: ast.Call, target: str | None) -> None:
        arguments: dict[str, Value] = {}
        for kw in value.keywords:
            if kw.arg:
                arguments[kw.arg] = self.reader.value(kw.value)
            elif isinstance(kw.value, ast.Dict):  # **{"vote_average.gte": 7}
                for key, item in zip(kw.value.keys, kw.value.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        arguments[key.value] = self.reader.value(item)
        positional = tuple(self.reader.value(a) for a in value.args)
        name = _callee(value.func)
        assert name is not None
        self.read.add(id(value))
        self.calls.append(
            ProgramCall(
                name,
                arguments,
                positional,
                target,
                stmt.lineno,
                ast.unparse(value),
                self._spans(value),
            )
        )
        if target is not None:
            self.scope.bind_call(target, len(self.calls) - 1)

    def _spans(self, value: ast.Call) -> CallSpans | None:
        offsets = self.offsets
        if offsets is None:
            return None
        call, func = offsets.span(value), offsets.span(value.func)
        if call is None or func is None:
            return None
        keywords: dict[str, tuple[int, int]] = {}
        values: dict[str, tuple[int, int]] = {}
        for kw in value.keywords:
            whole, inner = offsets.span(kw), offsets.span(kw.value)
            if kw.arg and whole is not None and inner is not None:
                keywords[kw.arg], values[kw.arg] = whole, inner
        return CallSpans(call, func, keywords, values)

    def _collects(self, value: ast.Call) -> bool:
        """``out.append(...)`` on a name the program made itself (not an API's object)."""
        func = value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in _COLLECT
            and isinstance(func.value, ast.Name)
            and func.value.id in self.scope.aliases
        )

    def _collect(self, value: ast.Call) -> None:
        """``ids.append(t.id)``: ``ids`` now holds what was appended (a list of ``t.id``
        when it started empty, like ``[t.id for t in r.items]``)."""
        assert isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
        self.read.add(id(value))
        name = value.func.value.id
        held = self.scope.aliases.get(name)
        added = [self.reader.value(a) for a in value.args]
        text = ast.unparse(value)
        if held in ([], set()) and len(added) == 1 and isinstance(added[0], Ref):
            ref = added[0]
            self.scope.aliases[name] = Ref(ref.var, ref.step, ref.path, many=True, text=text)
            return
        parts = _parts(held) + tuple(p for a in added for p in _parts(a))
        if parts or not all(is_literal(a) for a in added):
            self.scope.aliases[name] = Derived("value", parts, text)

    def _nested_calls(self, value: ast.Call) -> None:
        """The API calls passed straight to print(...) or out.append(...)."""
        for arg in (*value.args, *(kw.value for kw in value.keywords)):
            inner = arg if isinstance(arg, ast.Call) else _call_root(arg)
            if inner is not None and _is_api_call(inner):
                self.call(ast.Expr(inner, lineno=getattr(arg, "lineno", 0)), inner, None)

    def unread_calls(self, body: list[ast.stmt]) -> None:
        """An E1 for each API call of ``body`` that was not read as a step: one inside an
        expression (``x = 1 + F(...)``, ``[F(id=t.id) for t in r.items]``, a loop's or a
        branch's condition, an argument's value). Nothing checked it and no runner would
        make it, so it is never passed as clean. A line already reported is not again."""
        reported = {f.location[0] for f in self.problems if f.location}
        # a method of a value the program holds (person.job.lower()) is no API call
        bound = {
            n.id
            for stmt in body
            for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        for stmt in body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call) or id(node) in self.read:
                    continue
                where = f"line[{getattr(node, 'lineno', stmt.lineno)}]"
                root = _chain_root(node.func)
                if (
                    not _is_api_call(node)
                    or _callee(node.func) in _PYTHON_BUILTINS  # range(2), zip(a, b)
                    or where in reported
                    or (root is not None and root is not node.func and root.id in bound)
                ):
                    continue
                reported.add(where)
                self.problems.append(
                    Finding(
                        "E1",
                        (where,),
                        ast.unparse(node)[:200],
                        message=f"{UNREAD_CALL}: write it on a line of its own, "
                        "var = NAME(key=value, ...), and use var",
                    )
                )

    def _not_a_call(self, stmt: ast.stmt) -> None:
        self.problems.append(
            Finding(
                "E1",
                (f"line[{stmt.lineno}]",),
                ast.unparse(stmt)[:200],
                message="not a call: each line must be NAME(key=value, ...) or var = NAME(...)",
            )
        )


#: builtins a model wraps values in (``len(r.items)``, ``str(x)``): never API calls
_BUILTINS = frozenset(
    {"len", "str", "int", "float", "list", "dict", "set", "sorted", "sum", "max", "min"}
)


#: Python's own functions a program computes values with inside an expression
#: (``range(2)``, ``zip(a, b)``): not API calls; any other call there is one no step reads
_PYTHON_BUILTINS = _BUILTINS | {
    "range", "enumerate", "zip", "reversed", "bool", "tuple", "abs", "round", "any", "all",
    "map", "filter", "isinstance", "repr", "format", "chr", "ord",
}  # fmt: skip


def _is_api_call(node: ast.Call) -> bool:
    name = _callee(node.func)
    return name is not None and name not in _OUTPUT and name not in _BUILTINS


def _parts(value: Value) -> tuple[Ref | Unbound, ...]:
    if isinstance(value, (Ref, Unbound)):
        return (value,)
    if isinstance(value, Derived):
        return value.parts
    return ()


def _rebase(node: ast.expr, name: str) -> ast.expr:
    """``GET_x(...).a.b`` with the call replaced by the name ``name``: ``name.a.b``."""
    if isinstance(node, ast.Attribute):
        return ast.Attribute(_rebase(node.value, name), node.attr, ast.Load())
    if isinstance(node, ast.Subscript):
        return ast.Subscript(_rebase(node.value, name), node.slice, ast.Load())
    return ast.Name(name, ast.Load())


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and _callee(func.value) is not None:
        return ast.unparse(func)
    return None


def reads_at(text: str, shown: str) -> list[tuple[int, int]]:
    """Where the program ``text`` writes the read a finding shows as ``shown``: a finding
    shows a reference in :func:`ast.unparse`'s spelling (``b['books'][0]['id']`` for
    ``b["books"][0]["id"]``). The ``(start, end)`` character offsets of each, in order.

    >>> reads_at('b = f()\\ng(id=b["books"][0]["id"])', "b['books'][0]['id']")
    [(13, 32)]
    """
    offsets = _Offsets(text)
    spans: list[tuple[int, int]] = []
    for stmt in program_statements(text)[0]:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
                span = offsets.span(node)
                if span is not None and ast.unparse(node) == shown:
                    spans.append(span)
    return sorted(spans)


def literal_request(call: ProgramCall) -> ApiRequest:
    """The call as a request holding only its literal arguments (references left out)."""
    args = {k: v for k, v in call.arguments.items() if not isinstance(v, (Ref, Unbound, Derived))}
    return ApiRequest(name=call.name, arguments=args, format="python", raw=call.text)


def is_literal(value: Value) -> bool:
    return not isinstance(value, (Ref, Unbound, Derived))
