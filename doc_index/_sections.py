"""What gets indexed: the documentation texts of a catalog and of extra Markdown files.

A *section* is one self-contained piece of documentation with a label (``"429"``,
``"parameter `market` (in query, string, optional)"``) and a body. Sections are split
into sentences and semantically re-chunked (:mod:`doc_index._chunking`); every chunk of a
section keeps its label so that it still reads on its own when it is retrieved.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._model import Operation, Parameter, Response
from doc_index._chunking import clean_text

__all__ = ["Section", "catalog_sections", "doc_sections", "docs_fingerprint"]

# Long enough to hold any real description, short enough that one absurd spec value
# (an inlined data URI, a pasted changelog) cannot dominate the index.
_MAX_FIELD_CHARS = 4000
_MAX_DOC_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Section:
    """One piece of documentation: ``api`` is ``None`` for API-independent text.

    ``whole`` marks a section that documents one thing (a parameter, an error response):
    it stays one chunk when it fits, because its sentences explain each other ("Bad or
    expired token." / "You should re-authenticate the user.") and a schema's generic
    sentence cut loose from it would be retrieved in its place.
    """

    label: str
    body: str
    api: str | None
    kind: str
    whole: bool = False


# -- catalog ------------------------------------------------------------------------


def catalog_sections(catalog: ApiCatalog) -> Iterator[Section]:
    """Every operation's description, parameter docs and error responses, in catalog order."""
    for op in catalog.operations:
        yield from _operation_sections(op)


def _operation_sections(op: Operation) -> Iterator[Section]:
    where = f"{op.method} {op.path}" if op.is_http else ""
    label = f"{op.name} ({where})" if where else op.name
    if op.description.strip():
        yield Section(label, _clip(op.description), op.name, "description")
    for param in op.parameters:
        body = _parameter_body(param)
        if body:
            yield Section(_parameter_label(param), body, op.name, "parameter", whole=True)
    for response in op.error_responses:
        body = _error_body(response)
        if body:
            yield Section(response.status, body, op.name, "error", whole=True)


def _parameter_label(param: Parameter) -> str:
    schema = param.schema
    facts = [f"in {param.location}"]
    type_ = schema.get("type")
    if isinstance(type_, list):
        facts.append(" or ".join(str(t) for t in type_))
    elif type_:
        facts.append(str(type_))
    facts.append("required" if param.required else "optional")
    return f"parameter `{param.name}` ({', '.join(facts)})"


def _parameter_body(param: Parameter) -> str:
    schema = param.schema
    description = clean_text(param.description or _str(schema.get("description")))
    if description and description[-1] not in ".!?:":
        description += "."
    # Facts from the schema form one sentence, so that a value error ("must be one of
    # ...", "at most 50") can be matched against them.
    facts: list[str] = []
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        facts.append("allowed values: " + ", ".join(_scalar(v) for v in enum[:50]))
    for key, words in (
        ("format", "format"),
        ("pattern", "pattern"),
        ("default", "default"),
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("minLength", "minimum length"),
        ("maxLength", "maximum length"),
        ("example", "example"),
    ):
        if key in schema and schema[key] is not None:
            fact = f"{words}: {_scalar(schema[key])}"
            # Spotify-style descriptions already end with "Default: 20. Minimum: 1."
            if fact.lower() not in description.lower():
                facts.append(fact)
    if facts:
        sentence = "; ".join(facts) + "."
        description = f"{description} {sentence[0].upper()}{sentence[1:]}".strip()
    return _clip(description)


def _error_body(response: Response) -> str:
    parts = [response.description.strip()]
    if response.schema:
        parts.extend(_schema_descriptions(response.schema))
    example = response.example
    if example is None and response.schema:
        example = response.schema.get("example")
    if example is not None:
        parts.append(f"Example: {_scalar(example)}")
    return _clip("\n\n".join(p for p in parts if p))


def _schema_descriptions(schema: Mapping[str, Any], depth: int = 0) -> Iterator[str]:
    """Descriptions of the error schema and its objects, and the allowed values of its
    fields; leaf field descriptions ("The HTTP status code") are left out because every
    error of a spec shares them and they would crowd out the distinctive text."""
    if depth > 4:
        return
    description = _str(schema.get("description")).strip()
    if description:
        yield description
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            if not isinstance(sub, Mapping):
                continue
            enum = sub.get("enum")
            if isinstance(enum, list) and enum:
                values = ", ".join(_scalar(v) for v in enum[:50])
                yield f"Field `{name}` is one of: {values}."
            if sub.get("type") == "object" or "properties" in sub:
                yield from _schema_descriptions(sub, depth + 1)
    for key in ("allOf", "oneOf", "anyOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                if isinstance(sub, Mapping):
                    yield from _schema_descriptions(sub, depth + 1)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)[:_MAX_FIELD_CHARS]
    except (TypeError, ValueError):  # pragma: no cover - default=str makes this unlikely
        return repr(value)


def _clip(text: str) -> str:
    return text[:_MAX_FIELD_CHARS]


# -- extra documents ----------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def doc_sections(paths: Sequence[Path], catalog: ApiCatalog) -> Iterator[Section]:
    """Sections of extra Markdown/text files, split at headings.

    A section belongs to an API when its heading, or an enclosing heading, names an
    operation (``## get-an-album`` or ``## GET /albums/{id}``); otherwise it is
    API-independent (a global error table, an authentication guide).
    """
    for path in paths:
        text = _read_doc(path)
        yield from _markdown_sections(text, path.name, catalog)


def _read_doc(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_DOC_BYTES + 1)
    except OSError as exc:
        raise ConfigurationError(f"cannot read documentation file {str(path)!r}: {exc}") from exc
    if len(data) > _MAX_DOC_BYTES:
        raise ConfigurationError(
            f"documentation file {str(path)!r} is larger than {_MAX_DOC_BYTES} bytes"
        )
    return data.decode("utf-8", errors="replace")


def _markdown_sections(text: str, source: str, catalog: ApiCatalog) -> Iterator[Section]:
    stack: list[tuple[int, str]] = []  # (level, heading) of the enclosing headings
    lines: list[str] = []
    in_fence = False

    def flush() -> Iterator[Section]:
        body = "\n".join(lines).strip()
        lines.clear()
        if not body:
            return
        headings = [h for _, h in stack]
        api = None
        for heading in reversed(headings):
            api = _operation_named(heading, catalog)
            if api is not None:
                break
        label = " > ".join(headings) if headings else source
        yield Section(label, body, api, "doc")

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m is None:
            lines.append(line)
            continue
        yield from flush()
        level = len(m.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, m.group(2)))
    yield from flush()


def _operation_named(heading: str, catalog: ApiCatalog) -> str | None:
    """The operation a heading names, the longest name winning (``get-albums`` over
    ``get-album``)."""
    lowered = heading.lower()
    best: tuple[int, str] | None = None
    for op in catalog.operations:
        candidates = [op.name]
        if op.is_http:
            candidates.append(f"{op.method} {op.path}")
        for cand in candidates:
            pattern = r"(?<![\w\-/{}])" + re.escape(cand.lower()) + r"(?![\w\-/{}])"
            if re.search(pattern, lowered) and (best is None or len(cand) > best[0]):
                best = (len(cand), op.name)
    return best[1] if best else None


def docs_fingerprint(paths: Sequence[Path]) -> str:
    """A hash of the extra documents' names and contents (the cache key next to the
    catalog's fingerprint)."""
    digest = hashlib.sha256()
    for path in paths:
        # The name, not the full path: moving a project must not force a rebuild.
        digest.update(path.name.encode())
        digest.update(b"\0")
        digest.update(_read_doc(path).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]
