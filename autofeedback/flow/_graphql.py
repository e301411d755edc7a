"""What functions return, from GraphQL SDL as GraphQL-RestBench writes it, and a way to
attach such response schemas to a catalog built from function specs.

GraphQL-RestBench gives each sample a ``GraphQL_schema``: object types for the JSON
each REST call returned, and a ``Query`` type whose fields are the functions (with a
``@rest`` directive naming the endpoint). Its quirks, handled here: one ``type Query``
per function (concatenated, so several in one document), a ``JSON`` scalar and the
``@rest`` directive used without being declared, and an empty text for functions that
return nothing. The SDL is read with graphql-core, never parsed by hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.core._exceptions import ConfigurationError, SpecError
from autofeedback.core._install import install_hint
from autofeedback.core._model import Response

if TYPE_CHECKING:
    from graphql import GraphQLOutputType

__all__ = ["read_response_schemas", "response_schemas_from_graphql", "with_responses"]

#: GraphQL's built-in scalars as JSON Schema; any other scalar (``JSON``) is ``{}``
_SCALARS: Mapping[str, Mapping[str, Any]] = {
    "Int": {"type": "integer"},
    "Float": {"type": "number"},
    "String": {"type": "string"},
    "Boolean": {"type": "boolean"},
    "ID": {"type": "string"},
}


def response_schemas_from_graphql(
    sdl: str, *, source: str = "<graphql>"
) -> dict[str, dict[str, Any]]:
    """Each ``Query`` field's name -> a JSON Schema of what it returns: object types
    become ``properties`` (non-null fields listed in ``required``), lists ``items``,
    ``Int``/``Float``/``String``/``Boolean``/``ID`` their JSON types, enums ``enum``,
    unions and interfaces ``anyOf``, custom scalars (``JSON``) ``{}``. A type that
    contains itself is cut at its second appearance (``{"type": "object"}``).

    Raises :class:`SpecError` when the text is not GraphQL SDL; an empty text has no
    functions.

    >>> response_schemas_from_graphql('''
    ...   type Movie { id: Int! title: String genres: [JSON] }
    ...   type Query { GET_movie(movie_id: Int!): Movie }''')["GET_movie"]
    ... # doctest: +NORMALIZE_WHITESPACE
    {'type': 'object', 'title': 'Movie', 'properties': {'id': {'type': 'integer'},
     'title': {'type': 'string'}, 'genres': {'type': 'array', 'items': {}}},
     'required': ['id']}
    """
    try:
        import graphql
    except ImportError as exc:  # pragma: no cover - graphql-core is an extra
        raise ConfigurationError(
            f"reading GraphQL SDL needs graphql-core: {install_hint('graphql')}"
        ) from exc
    if not sdl.strip():
        return {}
    try:
        document = graphql.parse(sdl, no_location=True)
    except graphql.GraphQLError as exc:
        raise SpecError(f"not GraphQL SDL: {exc.message}", source=source) from exc
    document = _one_query(document)
    try:
        schema = graphql.build_ast_schema(document, assume_valid_sdl=True)
    except (graphql.GraphQLError, TypeError, AttributeError, KeyError, ValueError) as exc:
        # assume_valid_sdl skips validation: a document graphql-core would reject fails
        # here in its own ways, and is still only a bad spec
        raise SpecError(f"GraphQL SDL does not build: {exc}", source=source) from exc
    query = schema.query_type
    if not isinstance(query, graphql.GraphQLObjectType):
        return {}
    return {name: _json_schema(field.type, ()) for name, field in query.fields.items()}


def _one_query(document: Any) -> Any:
    """The document with its several ``type Query`` blocks turned into extensions of
    the first, and every type it uses but never declares (``JSON``) declared a scalar."""
    from graphql import language as ast

    declared: set[str] = set()
    used: set[str] = set()
    definitions: list[Any] = []
    seen_query = False

    class Names(ast.Visitor):
        def enter_named_type(self, node: Any, *_args: Any) -> None:
            used.add(node.name.value)

    ast.visit(document, Names())
    for node in document.definitions:
        name = getattr(getattr(node, "name", None), "value", None)
        if isinstance(node, ast.ObjectTypeDefinitionNode) and name == "Query":
            if seen_query:
                node = ast.ObjectTypeExtensionNode(
                    name=node.name, interfaces=node.interfaces, directives=(), fields=node.fields
                )
            seen_query = True
        if isinstance(node, ast.TypeDefinitionNode) and name is not None:
            declared.add(name)
        definitions.append(node)
    builtin = {"Int", "Float", "String", "Boolean", "ID"}
    for name in sorted(used - declared - builtin):
        definitions.append(
            ast.ScalarTypeDefinitionNode(name=ast.NameNode(value=name), directives=())
        )
    return ast.DocumentNode(definitions=tuple(definitions))


def _json_schema(gtype: GraphQLOutputType, stack: tuple[str, ...]) -> dict[str, Any]:
    import graphql

    if isinstance(gtype, graphql.GraphQLNonNull):
        return _json_schema(gtype.of_type, stack)
    if isinstance(gtype, graphql.GraphQLList):
        return {"type": "array", "items": _json_schema(gtype.of_type, stack)}
    if isinstance(gtype, graphql.GraphQLScalarType):
        return dict(_SCALARS.get(gtype.name, {}))
    if isinstance(gtype, graphql.GraphQLEnumType):
        return {"type": "string", "enum": list(gtype.values)}
    if isinstance(gtype, graphql.GraphQLUnionType):
        return {"anyOf": [_json_schema(t, stack) for t in gtype.types]}
    if isinstance(gtype, (graphql.GraphQLObjectType, graphql.GraphQLInterfaceType)):
        if gtype.name in stack:
            return {"type": "object", "title": gtype.name}
        inner = (*stack, gtype.name)
        props = {name: _json_schema(f.type, inner) for name, f in gtype.fields.items()}
        required = [
            n for n, f in gtype.fields.items() if isinstance(f.type, graphql.GraphQLNonNull)
        ]
        out: dict[str, Any] = {"type": "object", "title": gtype.name, "properties": props}
        if required:
            out["required"] = required
        return out
    return {}


def with_responses(catalog: ApiCatalog, schemas: Mapping[str, Mapping[str, Any]]) -> ApiCatalog:
    """A new catalog whose operations named in ``schemas`` document that JSON Schema as
    their ``"200"`` response (replacing a ``"200"`` they had); the others are unchanged.

    >>> catalog = ApiCatalog.from_tools([{"name": "GetUserToken", "parameters": {}}])
    >>> with_responses(catalog, {"GetUserToken": {"type": "object", "properties":
    ...     {"token": {"type": "string"}}}}).get("GetUserToken").responses[0].status
    '200'
    """
    ops = []
    for op in catalog.operations:
        schema = schemas.get(op.name)
        if schema is not None:
            kept = tuple(r for r in op.responses if r.status != "200")
            op = dataclasses.replace(op, responses=(Response("200", schema=dict(schema)), *kept))
        ops.append(op)
    return ApiCatalog(ops, servers=catalog.servers, source=catalog.source)


def read_response_schemas(
    value: str | Path | Mapping[str, Any], *, source: str = "<responses>"
) -> dict[str, dict[str, Any]]:
    """Response schemas by function name from what a user or a record gives: GraphQL SDL
    text, a mapping ``{function: JSON Schema}``, or a file (``Path``) holding either
    (``.json``/``.yaml``/``.yml`` are mappings, anything else SDL). Raises
    :class:`SpecError` naming the source when it is neither.

    >>> read_response_schemas({"GetUserToken": {"type": "object"}})
    {'GetUserToken': {'type': 'object'}}
    >>> list(read_response_schemas("type Query { GET_me: JSON }"))
    ['GET_me']
    """
    if isinstance(value, Path):
        source = str(value)
        try:
            text = value.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise SpecError(f"cannot read the response schemas: {exc}", source=source) from exc
        if value.suffix.lower() in (".json", ".yaml", ".yml"):
            from autofeedback._specs._text import parse_text

            return read_response_schemas(parse_text(text, source), source=source)
        return response_schemas_from_graphql(text, source=source)
    if isinstance(value, str):
        return response_schemas_from_graphql(value, source=source)
    if not isinstance(value, Mapping):
        raise SpecError(
            f"response schemas must be GraphQL SDL or a mapping, got {type(value).__name__}",
            source=source,
        )
    out: dict[str, dict[str, Any]] = {}
    for name, schema in value.items():
        if not isinstance(schema, Mapping):
            raise SpecError(
                "a response schema must be a JSON Schema object", source=source, where=str(name)
            )
        out[str(name)] = dict(schema)
    return out
