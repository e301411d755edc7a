"""``$ref`` resolution and schema expansion for OpenAPI / Swagger / JSON Schema documents.

Every reference is expanded once and memoised by its target (file and JSON pointer), so
a spec whose schemas reference each other thousands of times (a 4 MB payments spec) is
read in time linear in its size; expansions share the memoised objects (the result is a
DAG, never copied). A reference met again while its own expansion is in progress
(recursion) becomes ``{"x-recursive-ref": ref}``, and one whose expansion would make the
schema too big to walk ``{"x-truncated-ref": ref}``: unconstrained, as a checker must
treat what it cannot see. References to other files work when the spec was loaded from a
file (each relative to the file that holds it, as DigitalOcean's spec gives every operation
its own file), and stay inside the spec's folder unless the caller allows more.

A reference whose target is not there (no such place in its document; a file that does
not exist or cannot be read or parsed) is an :class:`UnreadRef`: whoever holds it loads
without that part, and the operation it belongs to lists the place (see
:attr:`autofeedback.Operation.unread`). A reference the loader refuses to follow (a URL,
a file outside the spec's folder, one that is not a regular file or is too big, too many
files, a cycle) is a :class:`~autofeedback.SpecError` for the whole spec.

JSON Schema's own identifiers are resolved by ``referencing`` (python-jsonschema's
resolver), once a schema uses them: a ``$id`` sets the base URI of the references inside
it, ``$anchor`` names a place, ``$dynamicRef`` resolves in the dynamic scope of the
expansion (as a validator's descent would), and a reference to a JSON Schema meta-schema
reads the bundled copy. A remote reference is read only from the origins the load's
:class:`~autofeedback._specs._remote.RemoteRefs` allows; else it is an unread reference,
like one to a missing file.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from autofeedback._specs._common import join, read_regular_file
from autofeedback._specs._dialects import draft_of, upgrade, upgrade_node
from autofeedback._specs._remote import RemoteRefRefused, current_remote_refs, shown_ref
from autofeedback._specs._text import parse_text
from autofeedback.core._exceptions import SpecError

if TYPE_CHECKING:
    from referencing import Registry

#: referencing's resolver at one place (a base URI and a dynamic scope), as
#: ``Registry.resolver`` makes it: its class is not public
Scope = Any

__all__ = [
    "MAX_REF_FILES",
    "MAX_REF_TOTAL_BYTES",
    "TREE_BUDGET",
    "Resolver",
    "UnreadRef",
    "normalise_openapi_schema",
]

#: The most nodes one expanded schema may have as a tree. Expansions share memoised
#: objects, so building them is linear; but whoever walks a schema (a validator on deep
#: data, a JSON dump, an example generator) walks the tree. Past the budget a reference
#: becomes ``{"x-truncated-ref": ref}``.
TREE_BUDGET = 20_000

#: The most other files one spec's references may read (DigitalOcean's spec reads about
#: 1,700: one file per operation, its responses, examples and models), and the most bytes
#: they may hold together (each one at most :data:`~._common.MAX_REF_BYTES`).
MAX_REF_FILES = 10_000
MAX_REF_TOTAL_BYTES = 256 * 1024 * 1024
_URL_REF = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_SUBSCHEMAS = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "additionalItems",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "if",
        "then",
        "else",
        "anyOf",
        "oneOf",
        "allOf",
        "prefixItems",
    }
)


class UnreadRef(SpecError):
    """A ``$ref`` whose target is not there to read; ``where`` is the place of the
    ``$ref``. What holds it is loaded without it."""


class Resolver:
    """Resolves ``$ref`` (local JSON pointers and, from a file, other files) and expands
    schemas.

    ``outside_refs`` lets references reach files outside ``base_dir`` (the folder of the
    spec); by default a spec cannot make the loader read ``../../etc/passwd``.
    """

    def __init__(
        self, root: Any, source: str, base_dir: Path | None, *, outside_refs: bool = False
    ) -> None:
        self.root = root
        self.source = source
        self.base_dir = base_dir
        self.outside_refs = outside_refs
        self.files: dict[Path, Any] = {}
        #: the referenced files that could not be read, with why
        self.unreadable: dict[Path, str] = {}
        #: each schema ``$ref`` that could not be followed (by what is wrong with it: "$ref
        #: '#/x' points nowhere"), with the places that use it
        self.dangling: dict[str, list[str]] = {}
        #: the places of the schema ``$ref``s not followed since the loader last set it
        #: (one operation's), also inside memoised expansions used again
        self.unread: list[str] = []
        #: places met inside each expansion being memoised, innermost last
        self._inner: list[list[str]] = []
        self._bytes = 0
        self._paths: dict[tuple[str, str], Path] = {}
        # an expansion, its size as a tree, and the places inside it that could not be
        # read, relative to the place it was expanded at (".properties.a.$ref")
        self._memo: dict[tuple[str, bool], tuple[Any, int, tuple[str, ...]]] = {}
        self._left = TREE_BUDGET
        self._active: set[tuple[str, bool]] = set()
        #: the remote documents read (by URI), and the origin allowance they were read by
        self.remote = current_remote_refs()
        self._remote_docs: dict[str, Any] = {}
        self._root_scope: Scope | None = None

    # A document context is (document, its file or "" for the root).
    def lookup(self, ref: str, where: str, doc_file: str) -> tuple[Any, str, str]:
        """The target of ``ref`` (not expanded), its document file and its key."""
        file_part, _, pointer = ref.partition("#")
        if file_part:
            if _URL_REF.match(file_part):
                raise SpecError(
                    f"remote $ref {shown_ref(ref)!r} is not supported (no network access)",
                    source=self.source,
                    where=where,
                )
            doc, doc_file = self._external(ref, file_part, where, doc_file)
        else:
            doc = self.root if not doc_file else self.files[Path(doc_file)]
        target = doc
        for raw in pointer.split("/")[1:] if pointer else []:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise UnreadRef(
                    f"$ref {ref!r} points nowhere", source=self.source, where=join(where, "$ref")
                )
        return target, doc_file, f"{doc_file}#{pointer}"

    def _external(self, ref: str, file_part: str, where: str, doc_file: str) -> tuple[Any, str]:
        base = Path(doc_file).parent if doc_file else self.base_dir
        if base is None or self.base_dir is None:
            raise SpecError(
                f"$ref to another file ({file_part!r}) needs the spec to be loaded from a file",
                source=self.source,
                where=join(where, "$ref"),
            )
        place = (str(base), file_part)
        path = self._paths.get(place)
        if path is None:  # a spec in many files names the same few files thousands of times
            path = self._paths[place] = (base / unquote(file_part)).resolve()
        if not self.outside_refs and not path.is_relative_to(self.base_dir.resolve()):
            raise SpecError(
                f"$ref {file_part!r} leaves the spec's folder ({self.base_dir}); "
                "allow it with outside_refs=True or AUTOFEEDBACK_ALLOW_OUTSIDE_REFS=1",
                source=self.source,
                where=join(where, "$ref"),
            )
        if path not in self.files:
            why = self.unreadable.get(path) or self._read(path, file_part, where)
            if why:
                try:
                    shown = path.relative_to(self.base_dir.resolve()).as_posix()
                except ValueError:
                    shown = str(path)
                raise UnreadRef(
                    f"$ref {ref!r} points to a file that cannot be read ({shown}: {why})",
                    source=self.source,
                    where=join(where, "$ref"),
                )
        return self.files[path], str(path)

    def _read(self, path: Path, file_part: str, where: str) -> str:
        """Read and parse ``path`` into :attr:`files`; else say why it cannot be read
        (remembered in :attr:`unreadable`). A file the loader refuses to read (not a
        regular file, too big, past the bounds) is a :class:`SpecError`."""
        if len(self.files) + len(self.unreadable) >= MAX_REF_FILES:
            raise SpecError(
                f"the spec reads more than {MAX_REF_FILES:,} other files",
                source=self.source,
                where=join(where, "$ref"),
            )
        why = ""
        try:
            data = read_regular_file(path)
        except (FileNotFoundError, NotADirectoryError):
            why = "no such file"
        except PermissionError:
            why = "permission denied"
        except OSError as exc:  # a FIFO, a device, a file over the size limit
            raise SpecError(
                f"cannot read referenced file {file_part!r}: {exc}",
                source=self.source,
                where=join(where, "$ref"),
            ) from exc
        else:
            self._bytes += len(data)
            if self._bytes > MAX_REF_TOTAL_BYTES:
                raise SpecError(
                    f"the spec's other files hold more than {MAX_REF_TOTAL_BYTES:,} bytes",
                    source=self.source,
                    where=join(where, "$ref"),
                )
            try:
                self.files[path] = parse_text(data.decode("utf-8-sig"), str(path))
            except UnicodeDecodeError as exc:
                why = f"not UTF-8 text (byte {exc.start})"
            except SpecError as exc:
                why = f"{exc.where}: {exc.reason}" if exc.where else exc.reason
        if why:
            self.unreadable[path] = why
        return why

    def deref(self, obj: Any, where: str, doc_file: str = "") -> tuple[Any, str]:
        """Follow a chain of ``$ref`` objects to a non-ref value (for parameters,
        responses, request bodies, path items)."""
        seen: set[str] = set()
        while isinstance(obj, dict) and isinstance(obj.get("$ref"), str):
            target, doc_file, key = self.lookup(obj["$ref"], where, doc_file)
            if key in seen:
                raise SpecError(
                    f"$ref cycle through {obj['$ref']!r}", source=self.source, where=where
                )
            seen.add(key)
            obj = target
        return obj, doc_file

    def schema(
        self, schema: Any, where: str, *, fold_nullable: bool = True, doc_file: str = ""
    ) -> dict[str, Any]:
        """``schema`` with every ``$ref`` expanded and OpenAPI 3.0 quirks normalised. A
        ``$ref`` that cannot be followed becomes ``{"x-unresolved-ref": ref}``
        (unconstrained), its place listed in :attr:`unread` and :attr:`dangling`."""
        self._left = TREE_BUDGET
        out, _ = self._schema(schema, where, fold_nullable, doc_file)
        return out if isinstance(out, dict) else {}

    def _met(self, places: list[str]) -> None:
        """Places not read: the expansion being memoised keeps them, else the load's."""
        (self._inner[-1] if self._inner else self.unread).extend(places)

    def _schema(
        self,
        schema: Any,
        where: str,
        fold: bool,
        doc_file: str,
        scope: Scope | None = None,
        entered: bool = False,
    ) -> tuple[Any, int]:
        """The expansion and its size as a tree (what a walker of it will visit).
        ``scope``: the JSON Schema resolver of the place (its base URI and dynamic
        scope), once a schema uses identifiers; ``entered``: ``schema`` is the target of
        a lookup, whose base URI the scope already is."""
        if not (isinstance(schema, dict) and ("$ref" in schema or "$dynamicRef" in schema)):
            self._left -= 1
        if isinstance(schema, list):
            items = [
                self._schema(s, f"{where}[{i}]", fold, doc_file, scope)
                for i, s in enumerate(schema)
            ]
            return [v for v, _ in items], 1 + sum(n for _, n in items)
        if not isinstance(schema, dict):
            return schema, 1
        if isinstance(schema.get("$id"), str) and not doc_file and not entered:
            scope = self._in_resource(schema, scope)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if scope is None and not _needs_uri(ref):
                return self._ref(schema, ref, where, fold, doc_file)
            return self._uri_ref(schema, "$ref", ref, where, fold, scope)
        dynamic = schema.get("$dynamicRef")
        if isinstance(dynamic, str):
            return self._uri_ref(schema, "$dynamicRef", dynamic, where, fold, scope)
        out: dict[str, Any] = {}
        size = 1
        for key, value in schema.items():
            if key in _MAPS and isinstance(value, dict):
                sub: dict[str, Any] = {}
                for name, s in value.items():
                    sub[name], n = self._schema(
                        s, join(where, f"{key}.{name}"), fold, doc_file, scope
                    )
                    size += n
                out[key] = sub
            elif key in _SUBSCHEMAS:
                out[key], n = self._schema(value, join(where, key), fold, doc_file, scope)
                size += n
            else:
                out[key] = value
                size += 1
        return (normalise_openapi_schema(out) if fold else out), size

    # -- JSON Schema identifiers ($id, $anchor, $dynamicRef, remote documents) ---------

    def _scope(self) -> Scope:
        """The resolver at the document's root: the bundled meta-schemas, every ``$id``
        resource of the document, and remote documents as :attr:`remote` allows."""
        if self._root_scope is None:
            from referencing import Registry
            from referencing.jsonschema import DRAFT202012

            registry: Registry[Any] = Registry(retrieve=self._retrieve).combine(  # type: ignore[call-arg]
                _meta_schemas()
            )
            # an API description holds its schemas where no JSON Schema crawl looks
            # (under paths and components): crawl all of it for identifiers and anchors
            spec = _document_spec() if _api_description(self.root) else DRAFT202012
            root = spec.create_resource(self.root)
            uri = root.id() or ""
            # crawled once here: a resolver keeps the registry it was made with, so a
            # registry crawled on a lookup's miss would be crawled again on the next one
            registry = registry.with_resource(uri, root).crawl()
            self._root_scope = registry.resolver(base_uri=uri)
        return self._root_scope

    def _in_resource(self, schema: dict[str, Any], scope: Scope | None) -> Scope:
        from referencing.jsonschema import DRAFT202012

        return (scope or self._scope()).in_subresource(DRAFT202012.create_resource(schema))

    def _retrieve(self, uri: str) -> Any:
        """A remote document as a resource (read once per load), or why it is not."""
        from referencing.jsonschema import DRAFT202012

        doc = self._remote_docs.get(uri)
        if doc is None:
            if self.remote is None:
                raise RemoteRefRefused(
                    f"remote $ref {shown_ref(uri)!r} not read: no origin is allowed for remote "
                    "references (allow one with remote_refs=RemoteRefs(allow=[...]))"
                )
            if len(self._remote_docs) >= self.remote.max_documents:
                raise RemoteRefRefused(
                    f"remote $ref {shown_ref(uri)!r} not read: the spec reads more than "
                    f"{self.remote.max_documents} remote documents"
                )
            raw = self.remote.read(uri)
            # read in the dialect its $schema names, else the referring document's
            doc = upgrade(raw, draft_of(raw) if "$schema" in _as_dict(raw) else self._draft())
            self._remote_docs[uri] = doc
        return DRAFT202012.create_resource(doc)

    def _draft(self) -> int:
        """The JSON Schema draft the document's schemas are written in (OpenAPI 3.0 and
        Swagger 2: draft 4's)."""
        root = _as_dict(self.root)
        openapi = root.get("openapi")
        if "swagger" in root or (isinstance(openapi, str) and openapi.startswith("3.0")):
            return 4
        return draft_of(root)

    def _uri_ref(
        self,
        schema: dict[str, Any],
        keyword: str,
        ref: str,
        where: str,
        fold: bool,
        scope: Scope | None,
    ) -> tuple[Any, int]:
        """A reference resolved as JSON Schema resolves it (``$dynamicRef`` in the
        dynamic scope of this expansion, as a validator's descent would)."""
        from referencing.exceptions import Unresolvable

        place = join(where, keyword)
        try:
            resolved = (scope or self._scope()).lookup(ref)
        except Unresolvable as exc:
            if self.base_dir is not None and not ref.startswith("#") and not _needs_uri(ref):
                # a relative reference inside a $id resource of a spec split over files:
                # the file next to the spec, as such specs mean it
                return self._ref(schema, ref, where, fold, "")
            why = _unresolvable(ref, exc)
            self.dangling.setdefault(why, []).append(place)
            self._met([place])
            return {"x-unresolved-ref": ref}, 1
        # the same target expands alike only within the same dynamic scope; its last few
        # resources tell a recursion apart from a first visit, and bound the unrolling
        scope_uris = [uri for uri, _ in resolved.resolver.dynamic_scope()][:_SCOPE_KEPT]
        key = f"@{id(resolved.contents)}@{'|'.join(scope_uris)}"
        return self._expand(
            schema,
            keyword,
            ref,
            (resolved.contents, "", key),
            where,
            fold,
            "",
            scope,
            resolved.resolver,
        )

    def _ref(
        self, schema: dict[str, Any], ref: str, where: str, fold: bool, doc_file: str
    ) -> tuple[Any, int]:
        try:
            found = self.lookup(ref, where, doc_file)
        except UnreadRef as exc:
            # A dangling schema ref (ToolAlpaca's AviationAPI has one), or one into a file
            # that is not there: the schema is unknown, not the operation; leave it
            # unconstrained, and let the load say so (what that schema's checks would find
            # is not found) and the operation list the place
            self.dangling.setdefault(exc.reason, []).append(exc.where)
            self._met([exc.where])
            return {"x-unresolved-ref": ref}, 1
        return self._expand(schema, "$ref", ref, found, where, fold, doc_file, None, None)

    def _expand(
        self,
        schema: dict[str, Any],
        keyword: str,
        ref: str,
        found: tuple[Any, str, str],
        where: str,
        fold: bool,
        doc_file: str,
        scope: Scope | None,
        target_scope: Scope | None,
    ) -> tuple[Any, int]:
        """A reference's target expanded once (memoised by ``key``), with the keywords
        beside the reference."""
        target, target_file, key = found
        memo_key = (key, fold)
        hit = self._memo.get(memo_key)
        if hit is None:
            if memo_key in self._active:
                return {"x-recursive-ref": ref}, 1
            if self._left <= 0:
                return {"x-truncated-ref": ref}, 1
            self._active.add(memo_key)
            self._inner.append([])
            try:
                # counts its nodes
                expanded, size = self._schema(
                    target, where, fold, target_file, target_scope, target_scope is not None
                )
            finally:
                self._active.discard(memo_key)
                inner = self._inner.pop()
            self._memo[memo_key] = (expanded, size, tuple(_tail(p, where) for p in inner))
            self._met(inner)
        else:
            expanded, size, tails = hit
            if size > self._left:
                # Inlined here, the schema would make this one too big to walk (a densely
                # self-referencing graph unrolls factorially): leave it unconstrained.
                return {"x-truncated-ref": ref}, 1
            self._left -= size
            self._met([_at(where, t) for t in tails])
        # the $id beside it already set the scope the reference was read in
        siblings = {k: v for k, v in schema.items() if k != keyword and k != "$id"}
        if _only_identifiers(siblings):
            siblings = {}
        if siblings and (isinstance(expanded, dict) or expanded is True):
            # OpenAPI 3.1 / JSON Schema 2020-12: keywords beside $ref also apply.
            rest, n = self._schema(siblings, where, False, doc_file, scope, True)
            merged = _beside_ref(expanded if isinstance(expanded, dict) else {}, rest)
            return (normalise_openapi_schema(merged) if fold else merged), size + n
        return expanded, size


#: how many of the innermost dynamic-scope resources key an expansion (a recursion
#: through them unrolls about this many times before it is left unconstrained)
_SCOPE_KEPT = 4
_IDENTIFIERS = frozenset({"$anchor", "$dynamicAnchor", "$schema", "$comment"})


def _only_identifiers(siblings: dict[str, Any]) -> bool:
    return bool(siblings) and siblings.keys() <= _IDENTIFIERS


def _needs_uri(ref: str) -> bool:
    """Whether ``ref`` is more than a JSON pointer or a relative file: a URI with a
    scheme (``https:``, ``urn:``) or an anchor (``#name``)."""
    if ref.startswith("#"):
        return len(ref) > 1 and not ref.startswith("#/")
    try:
        scheme = urlsplit(ref).scheme
    except ValueError:
        return False
    return len(scheme) > 1  # one letter is a Windows drive, a file path


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _api_description(root: Any) -> bool:
    return isinstance(root, dict) and ("openapi" in root or "swagger" in root or "paths" in root)


_DATA_KEYS = frozenset({"enum", "const", "default", "examples", "example"})


def _document_spec() -> Any:
    """How an OpenAPI/Swagger document is crawled for ``$id`` and anchors: down to its
    schemas (under ``schema``, ``schemas`` and ``definitions``), and in them as JSON
    Schema 2020-12 crawls (a ``$id`` inside an unknown keyword is no identifier)."""
    from referencing import Specification
    from referencing.jsonschema import DRAFT202012

    schemas: dict[int, Any] = {}  # the schemas met (by id; kept alive here)

    def as_schema(value: Any) -> Any:
        if isinstance(value, dict):
            schemas[id(value)] = value
        return value

    def subresources_of(contents: Any) -> Iterator[Any]:
        if not isinstance(contents, dict):
            return
        if id(contents) in schemas:
            for sub in DRAFT202012.subresources_of(contents):
                yield as_schema(sub)
            return
        for key, value in contents.items():
            if key == "schema":
                yield as_schema(value)
            elif key in ("schemas", "definitions") and isinstance(value, dict):
                yield from (as_schema(v) for v in value.values())
            elif isinstance(value, dict) and key not in _DATA_KEYS:
                yield value
            elif isinstance(value, list) and key not in _DATA_KEYS:
                yield from (v for v in value if isinstance(v, dict))

    def id_of(contents: Any) -> str | None:
        return DRAFT202012.id_of(contents) if id(contents) in schemas else None

    def anchors_in(spec: Any, contents: Any) -> Any:
        return DRAFT202012.anchors_in(contents) if id(contents) in schemas else ()

    return Specification(  # type: ignore[call-arg]  # attrs fields the stubs do not see
        name="autofeedback-api-description",
        id_of=id_of,
        subresources_of=subresources_of,
        anchors_in=anchors_in,
        maybe_in_subresource=lambda segments, resolver, subresource: resolver.in_subresource(
            subresource
        ),
    )


@functools.cache
def _meta_schemas() -> Registry[Any]:
    """The JSON Schema meta-schemas (bundled by jsonschema-specifications), each read as
    the draft 2020-12 schema that means the same (as every check reads schemas)."""
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    out: Registry[Any] = Registry()
    for uri in REGISTRY:
        contents = REGISTRY.contents(uri)
        if "draft-03" not in uri:  # draft 3 is no draft a check reads
            resource = DRAFT202012.create_resource(upgrade(contents, draft_of(contents)))
            out = out.with_resource(uri, resource)
    return out.crawl()


def _unresolvable(ref: str, exc: Exception) -> str:
    """What to say of a reference ``referencing`` could not resolve."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, RemoteRefRefused):
            return str(cause)
        cause = cause.__cause__
    from referencing.exceptions import NoSuchAnchor, PointerToNowhere

    if _needs_uri(ref) and not ref.startswith("#"):
        ref = shown_ref(ref)  # no credential a URL may carry

    if isinstance(exc, NoSuchAnchor):
        return f"$ref {ref!r} names an anchor that is not there"
    if isinstance(exc, PointerToNowhere):
        return f"$ref {ref!r} points nowhere"
    return f"$ref {ref!r} names a schema that is not there"


def _tail(place: str, where: str) -> str:
    """``place`` (inside the expansion made at ``where``) relative to ``where``."""
    tail = place[len(where) :]
    return tail if where or not tail or tail.startswith("[") else "." + tail


def _at(where: str, tail: str) -> str:
    """The place ``tail`` (see :func:`_tail`) inside an expansion used at ``where``."""
    return where + tail if where or not tail.startswith(".") else tail[1:]


def _beside_ref(target: dict[str, Any], siblings: dict[str, Any]) -> dict[str, Any]:
    """A ``$ref``'s target and the keywords beside it, as one schema. One object when
    they share no assertion (the shape every later step reads: a body's ``properties``
    stay at the top); else the target as an ``allOf`` part, so that neither overwrites
    the other and ``unevaluated*`` sees what each evaluates, as 2020-12 means."""
    shared = (set(target) & set(siblings)) - _ANNOTATIONS
    unevaluated = {"unevaluatedProperties", "unevaluatedItems"}
    if not shared and not (unevaluated & (set(target) | set(siblings))):
        return {**target, **siblings}
    parts = siblings.get("allOf")
    parts = list(parts) if isinstance(parts, list) else []
    return {**siblings, "allOf": [*parts, target]}


def normalise_openapi_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0 / Swagger keywords -> JSON Schema 2020-12: ``nullable`` folds into
    ``type``, boolean ``exclusiveMinimum``/``exclusiveMaximum`` become numbers."""
    nullable = schema.pop("nullable", None)
    x_nullable = schema.pop("x-nullable", None)
    if nullable is True or x_nullable is True:
        typ = schema.get("type")
        if isinstance(typ, str):
            schema["type"] = [typ, "null"]
        elif isinstance(typ, list):
            if "null" not in typ:
                schema["type"] = [*typ, "null"]
        else:
            combined = {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
            kept = {k: v for k, v in schema.items() if k in _ANNOTATIONS}
            schema = {**kept, "anyOf": [combined, {"type": "null"}]} if combined else schema
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            del schema[exclusive]
            if flag and bound in schema:
                schema[exclusive] = schema.pop(bound)
    # keywords of older drafts with one meaning only (see autofeedback._specs._dialects)
    if isinstance(schema.get("items"), list) or isinstance(schema.get("dependencies"), dict):
        schema = upgrade_node(schema)
    if schema.get("type") == "file":  # Swagger 2.0 upload
        schema["type"] = "string"
        schema.setdefault("format", "binary")
    return schema


_ANNOTATIONS = frozenset({"description", "title", "example", "examples", "default", "deprecated"})
