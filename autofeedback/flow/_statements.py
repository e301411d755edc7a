"""A program's text as Python statements: the whole text parsed, or, where it does not
parse, each top-level statement on its own, so that one unreadable line (a zero-width
space, a call cut off at the end) does not hide the rest; and the E1 of a part that
cannot be parsed."""

from __future__ import annotations

import ast
import re

from autofeedback.core._findings import Finding

__all__ = ["program_statements", "unparsable"]


def program_statements(
    text: str,
) -> tuple[list[ast.stmt], list[tuple[int, str, BaseException]]]:
    """The statements of a program, numbered by their line in ``text.strip()``, and the
    parts that cannot be parsed (first line, text, error).

    One unreadable line (a zero-width space, a call cut off at the end) must not hide
    the rest: when the whole text does not parse, each top-level statement (a line at
    column 0 with its indented or bracketed continuation) is parsed on its own, and a
    part that still fails is reported alone. A part without a ``(`` is text around the
    program (a sentence, a Markdown fence), not a call: it is left out, unless it assigns
    a name (``y = b.x.x...``, too deep to parse), whose reads would go unchecked.

    >>> body, bad = program_statements('r = S(q="x")\\nD(id=r.items[0].id\\u200b)\\nE(n=1)')
    >>> [type(s).__name__ for s in body], [(line, part[:2]) for line, part, _ in bad]
    (['Assign', 'Expr'], [(2, 'D(')])
    """
    source = text.strip()
    try:
        return _shallow(ast.parse(source).body, source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        whole = exc
    body: list[ast.stmt] = []
    unreadable: list[tuple[int, str, BaseException]] = []
    parts = _statement_parts(source.split("\n"))
    while parts:
        start, lines = parts.pop(0)
        part = "\n".join(lines)
        try:
            tree = ast.parse(part)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            cut = _next_statement(lines)
            if cut is not None:  # a bracket never closed swallowed the lines after it
                parts.insert(0, (start + cut, lines[cut:]))
                lines = lines[:cut]
                part = "\n".join(lines)
            if "(" in part or _STATEMENT.match(part.strip()):
                unreadable.append((start + 1, part.strip(), exc))
            continue
        ast.increment_lineno(tree, start)
        kept, deep = _shallow(tree.body, source)
        body.extend(kept)
        unreadable.extend(deep)
    if not body:
        return [], [(1, source, whole)]
    return body, sorted(unreadable, key=lambda u: u[0])


#: how deep a statement's syntax tree may nest: a read of 400 fields (``b.x.x.x...``)
#: parses, then overflows the recursion of the readers (``ast.unparse``) after it
_MAX_TREE_DEPTH = 100


def _shallow(
    statements: list[ast.stmt], source: str
) -> tuple[list[ast.stmt], list[tuple[int, str, BaseException]]]:
    """``statements`` that nest at most :data:`_MAX_TREE_DEPTH` levels, and the others as
    unreadable parts (walked without recursion)."""
    kept: list[ast.stmt] = []
    deep: list[tuple[int, str, BaseException]] = []
    lines = source.split("\n")
    for stmt in statements:
        stack: list[tuple[ast.AST, int]] = [(stmt, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > _MAX_TREE_DEPTH:
                end = stmt.end_lineno or stmt.lineno
                part = "\n".join(lines[stmt.lineno - 1 : end])
                too_deep = SyntaxError(f"it nests deeper than {_MAX_TREE_DEPTH} levels")
                deep.append((stmt.lineno, part.strip(), too_deep))
                break
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
        else:
            kept.append(stmt)
    return kept, deep


#: lines that continue the compound statement before them, though at column 0
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")
#: a line that starts a statement of its own: a name called or assigned
_STATEMENT = re.compile(r"[A-Za-z_][\w.]*\s*(?:\(|=(?!=)|\[)")


def _statement_parts(lines: list[str]) -> list[tuple[int, list[str]]]:
    """``lines`` cut into top-level statements: a new one starts at a line at column 0
    once the brackets of the one before are closed (counted roughly, outside quotes)."""
    parts: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start, depth = 0, 0
    for i, line in enumerate(lines):
        new = (
            current
            and depth <= 0
            and line.strip()
            and line[:1] not in (" ", "\t")
            and not current[-1].rstrip().endswith(("\\", ":"))
            and not _CONTINUES.match(line)
        )
        if new:
            parts.append((start, current))
            current, start, depth = [], i, 0
        current.append(line)
        depth += _bracket_depth(line)
    if current:
        parts.append((start, current))
    return parts


def _next_statement(lines: list[str]) -> int | None:
    """The first line after the first that starts a statement at column 0, if any."""
    for i, line in enumerate(lines[1:], 1):
        if _STATEMENT.match(line) and not _CONTINUES.match(line):
            return i
    return None


def _bracket_depth(line: str) -> int:
    """Brackets opened minus closed in ``line``, outside quotes and comments."""
    depth, quote = 0, ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth


def unparsable(where: tuple[str, ...], text: str, exc: BaseException) -> Finding:
    msg = getattr(exc, "msg", None) or type(exc).__name__
    dotted = _DOTTED_KEYWORD.search(text)
    if dotted is not None:  # vote_average.gte=7: a documented name no keyword can spell
        name = dotted.group(1)
        msg += f"; a parameter named {name!r} is passed as **{{{name!r}: value}}"
    what = "the program" if not where else "this part of the program"
    return Finding("E1", where, text[:200], message=f"{what} cannot be parsed: {msg}")


_DOTTED_KEYWORD = re.compile(r"[(,]\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s*=(?!=)")
