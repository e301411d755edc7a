"""OpenAPI 3.0 / 3.1 documents (Swagger 2.0 reuses this loader, see ``_swagger2``).

What a checker needs from an operation, read the way OpenAPI means it:

* parameters from the path item and the operation (the operation's win), ``schema`` or
  ``content``, with their serialization ``style``/``explode``; a path key that carries a
  query string (``/responses/{id}/items?beta=true``) is its path plus a fixed query
  parameter;
* the request body of the first JSON media type, else the first form one
  (``application/x-www-form-urlencoded``, ``multipart/form-data``: how payment APIs take
  arguments); its fields are the properties the body schema can have, looking through
  ``allOf`` / ``oneOf`` / ``anyOf`` (a field is required when every branch requires it);
  ``requestBody.required`` says whether the body itself must be sent;
* responses with their schema and an example; security schemes as the places
  credentials may travel;
* path items, operations, parameters, responses and schemas given as ``$ref`` to other
  files (DigitalOcean's spec gives each operation its own file), each relative to the
  file that holds it.

What could not be read (an unknown key where OpenAPI has a fixed set; a ``$ref`` whose
target is not there) is a fault for the load to warn about, and the place of it is in
:attr:`~autofeedback.Operation.unread` of each operation whose documentation it is part
of: nothing is repaired against an operation only partly read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from autofeedback._specs._common import (
    Fault,
    Loaded,
    join,
    required_names,
    server_url,
    text,
    unknown_key_names,
    unknown_keys,
)
from autofeedback._specs._refs import Resolver, UnreadRef
from autofeedback.core._exceptions import SpecError
from autofeedback.core._model import Location, Operation, Parameter, Response

__all__ = ["OpenApi3Loader", "flag", "object_properties", "pick_media"]

_HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_JSON_MEDIA = re.compile(r"^application/(?:[\w.+-]*\+)?json\b|^\*/\*$|^application/\*$", re.I)
FORM_MEDIA = ("application/x-www-form-urlencoded", "multipart/form-data")
_TEMPLATE_VAR = re.compile(r"\{([^{}/]+)\}")

#: A parameter entry with the place it was read from and the file it lives in.
ParamEntry = tuple[dict[str, Any], str, str]
#: What an operation's body reading gives: schema, fields, required, media type.
Body = tuple[dict[str, Any] | None, list[Parameter], bool, str | None]


#: the most URLs one server entry's variables expand to (their enums multiply)
_MAX_SERVER_URLS = 64


def _server_urls(url: str, variables: Any) -> list[str]:
    """The URLs a server entry declares: each variable replaced by its ``default`` (the
    first URL, all defaults) and by every other value its ``enum`` lists (``{region}``
    in ``eu``, ``us``: a request to either region is to this API); at most
    :data:`_MAX_SERVER_URLS`. A variable without an enum declares its default only: a
    free host name is no origin a request may be sent to.

    >>> _server_urls("https://{region}.api.com/{v}", {"region": {"default": "eu",
    ...     "enum": ["eu", "us"]}, "v": {"default": "v1"}})
    ['https://eu.api.com/v1', 'https://us.api.com/v1']
    """
    urls = [url]
    if not isinstance(variables, dict):
        return urls
    for name, var in variables.items():
        if not isinstance(var, dict) or "default" not in var:
            continue
        values = [var["default"]]
        enum = var.get("enum")
        if isinstance(enum, list):
            values += [v for v in enum if isinstance(v, (str, int, float)) and v != values[0]]
        slot = "{" + str(name) + "}"
        urls = [u.replace(slot, str(v)) for u in urls for v in values][:_MAX_SERVER_URLS]
    return urls


class OpenApi3Loader:
    """Reads the operations of one OpenAPI 3.x document.

    ``faults`` lists what loads but is wrong (an unknown key of a path item, operation,
    parameter, request body or response; a ``$ref`` whose target is not there), each with
    its place, for the load to warn about; each operation's ``unread`` lists the places
    of those faults that are part of its documentation.
    """

    locations: tuple[str, ...] = ("path", "query", "header", "cookie")
    #: the fixed fields of the objects whose other keys are faults (OpenAPI 3.0 / 3.1)
    path_item_fields = frozenset(
        {"$ref", "summary", "description", "servers", "parameters", *_HTTP_METHODS}
    )
    operation_fields = frozenset(
        {
            "tags",
            "summary",
            "description",
            "externalDocs",
            "operationId",
            "parameters",
            "requestBody",
            "responses",
            "callbacks",
            "deprecated",
            "security",
            "servers",
        }
    )
    parameter_fields = frozenset(
        {
            "name",
            "in",
            "description",
            "required",
            "deprecated",
            "allowEmptyValue",
            "style",
            "explode",
            "allowReserved",
            "schema",
            "example",
            "examples",
            "content",
        }
    )
    response_fields = frozenset({"description", "headers", "content", "links"})
    request_body_fields = frozenset({"description", "content", "required"})
    #: where the security schemes are
    security_where = "components.securitySchemes"

    def __init__(
        self,
        doc: dict[str, Any],
        source: str,
        base_dir: Path | None,
        *,
        outside_refs: bool = False,
    ) -> None:
        self.doc = doc
        self.source = source
        self.check_version()
        self.resolver = Resolver(doc, source, base_dir, outside_refs=outside_refs)
        self.faults: list[Fault] = []
        # the places not read of the operation being loaded (the resolver adds its own),
        # of every operation (a security scheme), and of each parameter by its place
        self._unread: list[str] = []
        self._doc_unread: list[str] = []
        self._param_unread: dict[str, list[str]] = {}

    def check_version(self) -> None:
        if not str(self.doc.get("openapi", "3")).startswith("3"):
            raise self.error(
                f"unsupported OpenAPI version {self.doc['openapi']!r} (expected 3.0 or 3.1)",
                "openapi",
            )

    def error(self, message: str, where: str) -> SpecError:
        return SpecError(message, source=self.source, where=where)

    def load(self) -> Loaded:
        paths = self.doc.get("paths")
        if paths is None:
            paths = {}
        if not isinstance(paths, dict):
            raise self.error("'paths' must be an object", "paths")
        self._collect(self._doc_unread)
        self._schemes = self.security_schemes()
        self._auth_by_names: dict[tuple[str, ...], tuple[Parameter, ...]] = {}
        ops: list[Operation] = []
        for path, item in paths.items():
            ops.extend(self._path_item(str(path), item))
        if not ops and self.faults:
            where, what = self.faults[0]
            raise self.error(f"the spec describes no operations that could be read ({what})", where)
        if not ops:
            raise self.error("the spec describes no operations", "paths")
        for why, places in self.resolver.dangling.items():
            more = f" (and at {len(places) - 1} more places)" if len(places) > 1 else ""
            self.faults.append((places[0], f"{why}{more}; that schema is not checked"))
        return ops, self.servers()

    # -- what could not be read -----------------------------------------------------------

    def _collect(self, places: list[str]) -> None:
        """From now on, places not read go to ``places`` (one operation's)."""
        self._unread = places
        self.resolver.unread = places

    def _keys(self, obj: Mapping[str, Any], fields: frozenset[str], where: str) -> list[str]:
        """A fault for each unknown key of ``obj``; their places."""
        self.faults.extend(unknown_keys(obj, fields, where))
        return [join(where, key) for key in unknown_key_names(obj, fields)]

    def _deref(self, obj: Any, where: str, doc_file: str, what: str) -> tuple[Any, str] | None:
        """``obj`` with its ``$ref``s followed; ``None`` (a fault, a place not read) when
        its target is not there."""
        try:
            return self.resolver.deref(obj, where, doc_file)
        except UnreadRef as exc:
            self.faults.append((exc.where, f"{exc.reason}; that {what} is not read"))
            self._unread.append(exc.where)
            return None

    # -- document level -----------------------------------------------------------------

    def servers(self) -> list[str]:
        """The document's servers, then those a path or an operation declares for itself
        (Box's uploads go to ``upload.box.com``: a request there is to this API too),
        where the document declares any (else the document's first server, the one a
        request is sent to, would become a path's)."""
        out = self._servers(self.doc.get("servers"), "servers", strict=True)
        paths = self.doc.get("paths")
        if out and isinstance(paths, dict):
            for path, item in paths.items():
                if not isinstance(item, dict):
                    continue
                where = join("paths", str(path))
                out += self._servers(item.get("servers"), join(where, "servers"))
                for method in _HTTP_METHODS:
                    op = item.get(method)
                    if isinstance(op, dict):
                        out += self._servers(op.get("servers"), join(where, f"{method}.servers"))
        return list(dict.fromkeys(out))

    def _servers(self, servers: Any, where: str, *, strict: bool = False) -> list[str]:
        """The URLs of a ``servers`` list; a URL that cannot be split is the spec's fault:
        an error for the document's (``strict``), else a fault and the server left out."""
        out = []
        for i, server in enumerate(servers if isinstance(servers, list) else []):
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                continue
            for url in _server_urls(server["url"], server.get("variables")):
                try:
                    url = server_url(url, self.source, f"{where}[{i}].url")
                except SpecError as exc:
                    if strict:
                        raise
                    self.faults.append((f"{where}[{i}].url", f"{exc.reason}; it is ignored"))
                    continue
                out.append(url.rstrip("/") if url != "/" else url)
        return out

    def raw_security_schemes(self) -> Any:
        components = self.doc.get("components")
        return components.get("securitySchemes") if isinstance(components, dict) else None

    def security_schemes(self) -> dict[str, Any]:
        schemes = self.raw_security_schemes()
        if not isinstance(schemes, dict):
            return {}
        out: dict[str, Any] = {}
        for name, scheme in schemes.items():
            read = self._deref(scheme, f"{self.security_where}.{name}", "", "security scheme")
            if read is not None and isinstance(read[0], dict):
                out[str(name)] = read[0]
        return out

    # -- operations -----------------------------------------------------------------------

    def _path_item(self, path: str, item: Any) -> Iterator[Operation]:
        where = f"paths.{path}"
        shared = list(self._doc_unread)  # what every operation of this path item misses
        self._collect(shared)
        read = self._deref(item, where, "", "path item")
        if read is None:
            return
        item, doc_file = read
        if not isinstance(item, dict):
            raise self.error("a path item must be an object", where)
        shared.extend(self._keys(item, self.path_item_fields, where))
        norm_path, fixed_query = _split_path_key(path)
        common = self._parameter_list(item.get("parameters"), join(where, "parameters"), doc_file)
        for method in _HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            op_where = join(where, method)
            self._collect(list(shared))
            read = self._deref(op, op_where, doc_file, "operation")
            # an operation whose file is not there is kept by its method and path (marked
            # unread), so that a call to it is never taken for a call to another one
            op, op_file = read if read is not None else ({}, doc_file)
            if not isinstance(op, dict):
                raise self.error("an operation must be an object", op_where)
            yield self._operation(method, norm_path, fixed_query, op, common, op_where, op_file)

    def _parameter_list(self, params: Any, where: str, doc_file: str) -> list[ParamEntry]:
        """Dereferenced parameter objects with the place each came from."""
        if params is None:
            return []
        if not isinstance(params, list):
            raise self.error("'parameters' must be a list", where)
        out = []
        for i, p in enumerate(params):
            p_where = f"{where}[{i}]"
            read = self._deref(p, p_where, doc_file, "parameter")
            if read is None:
                continue
            p, p_file = read
            if not isinstance(p, dict):
                raise self.error("a parameter must be an object", p_where)
            name = p.get("name")
            if not isinstance(name, str) or not name:
                raise self.error("parameter has no 'name'", p_where)
            loc = p.get("in")
            if loc not in self.locations:
                shown = repr(loc) if loc is not None else "nothing"
                raise self.error(
                    f"parameter {name!r} has 'in' {shown}; expected one of "
                    f"{', '.join(self.locations)}",
                    p_where,
                )
            # the operations this parameter is part of (not one that overrides it) miss these
            self._param_unread[p_where] = self._keys(p, self.parameter_fields, p_where)
            out.append((p, p_where, p_file))
        return out

    def _operation(
        self,
        method: str,
        path: str,
        fixed_query: list[tuple[str, str]],
        op: dict[str, Any],
        common: list[ParamEntry],
        where: str,
        doc_file: str,
    ) -> Operation:
        self._unread.extend(self._keys(op, self.operation_fields, where))
        own = self._parameter_list(op.get("parameters"), join(where, "parameters"), doc_file)
        merged: dict[tuple[str, str], ParamEntry] = {}
        for entry in (*common, *own):
            merged[(entry[0]["name"], entry[0]["in"])] = entry  # operation level wins
        for _, p_where, _ in merged.values():
            self._unread.extend(self._param_unread.get(p_where, ()))
        plain = [e for e in merged.values() if e[0]["in"] in ("path", "query", "header", "cookie")]
        parameters = [self.parameter(p, p_where, p_file) for p, p_where, p_file in plain]
        declared = {(p.location, p.name) for p in parameters}
        for key, value in fixed_query:
            if ("query", key) not in declared:
                parameters.append(
                    Parameter(
                        key,
                        "query",
                        {"type": "string", "enum": [value]},
                        description=f"fixed by the documented path: {key}={value}",
                    )
                )
        for var in dict.fromkeys(_TEMPLATE_VAR.findall(path)):
            if ("path", var) not in declared:
                # The template needs it even when the spec forgets to document it.
                parameters.append(Parameter(var, "path", {"type": "string"}, required=True))
        body_schema, body_params, body_required, media = self.body(op, merged, where, doc_file)
        parameters.extend(body_params)
        op_id = op.get("operationId")
        name = op_id.strip() if isinstance(op_id, str) and op_id.strip() else None
        summary, description = text(op.get("summary")), text(op.get("description"))
        doc_text = "\n\n".join(dict.fromkeys(t for t in (summary, description) if t))
        tags = op.get("tags")
        return Operation(
            name=name or f"{method.upper()} {path}",
            description=doc_text,
            method=method.upper(),
            path=path,
            parameters=tuple(parameters),
            responses=tuple(
                self._responses(op.get("responses"), join(where, "responses"), doc_file)
            ),
            body_schema=body_schema,
            body_required=body_required,
            body_media=media,
            fixed_query=tuple(fixed_query),
            source=self.source,
            tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
            auth_parameters=self._auth_parameters(op),
            unread=tuple(dict.fromkeys(self._unread)),
        )

    def body(
        self,
        op: Mapping[str, Any],
        params: Mapping[tuple[str, str], ParamEntry],
        where: str,
        doc_file: str,
    ) -> Body:
        """The request body: OpenAPI 3's ``requestBody``."""
        body = op.get("requestBody")
        if body is None:
            return None, [], False, None
        where = join(where, "requestBody")
        read = self._deref(body, where, doc_file, "request body")
        if read is None:
            return None, [], False, None
        body, body_file = read
        if not isinstance(body, dict):
            raise self.error("'requestBody' must be an object", where)
        self._unread.extend(self._keys(body, self.request_body_fields, where))
        required = flag(body.get("required"))
        content = body.get("content")
        if not isinstance(content, dict) or not content:
            return None, [], required, None
        media_type = pick_media(content)
        media = content[media_type]
        if not isinstance(media, dict):
            return None, [], required, media_type
        schema = self.resolver.schema(
            media.get("schema") or {},
            join(join(where, f"content.{media_type}"), "schema"),
            doc_file=body_file,
        )
        structured = _JSON_MEDIA.match(media_type) or media_type.lower() in FORM_MEDIA
        fields = body_parameters(schema) if structured else []
        return schema, fields, required, media_type

    def parameter(self, p: dict[str, Any], where: str, doc_file: str) -> Parameter:
        loc: Location = p["in"]
        raw_schema = p.get("schema")
        if raw_schema is None and isinstance(p.get("content"), dict):
            # content-style parameter: the first media type's schema
            for media in p["content"].values():
                if isinstance(media, dict):
                    raw_schema = media.get("schema")
                    break
        schema = self.resolver.schema(raw_schema or {}, join(where, "schema"), doc_file=doc_file)
        if "example" in p and "example" not in schema:
            schema = {**schema, "example": p["example"]}
        default_style = "form" if loc in ("query", "cookie") else "simple"
        style = p["style"] if isinstance(p.get("style"), str) else default_style
        explode = p["explode"] if isinstance(p.get("explode"), bool) else style == "form"
        return Parameter(
            name=p["name"],
            location=loc,
            schema=schema,
            # Path parameters are always required (OpenAPI says so; specs forget).
            required=loc == "path" or flag(p.get("required")),
            description=text(p.get("description")),
            style=style,
            explode=explode,
        )

    def _auth_parameters(self, op: Mapping[str, Any]) -> tuple[Parameter, ...]:
        """Where the operation's credentials may travel: every scheme the document
        defines, those its ``security`` requirements name first (the operation's win over
        the document's). Credentials are never required by a check, only recognised:
        one that no requirement names (a signature ``sig`` in the query, a public
        operation called with a key) is still a credential, never an unknown parameter
        to drop, and always redacted."""
        if not self._schemes:
            return ()
        requirements = op.get("security", self.doc.get("security"))
        names: list[str] = []
        if isinstance(requirements, list):
            names = [str(n) for req in requirements if isinstance(req, dict) for n in req]
        # the same few requirements recur on every operation: built once each (frozen
        # parameters, shared)
        known = self._auth_by_names.get(tuple(names))
        if known is None:
            known = self._auth_by_names[tuple(names)] = self._auth_for(names)
        return known

    def _auth_for(self, names: list[str]) -> tuple[Parameter, ...]:
        out: dict[tuple[str, str], Parameter] = {}
        for name in dict.fromkeys([*names, *self._schemes]):
            scheme = self._schemes.get(name)
            if scheme is None:
                continue
            description = text(scheme.get("description"))
            kind = str(scheme.get("type", "")).lower()
            if kind == "apikey":
                where, key = scheme.get("in"), scheme.get("name")
                if where not in ("query", "header", "cookie") or not isinstance(key, str):
                    continue
                loc: Location = where
            elif kind in ("http", "basic", "oauth2", "openidconnect"):
                loc, key = "header", "Authorization"
            else:
                continue
            out.setdefault(
                (loc, key.lower()),
                Parameter(key, loc, {"type": "string"}, required=False, description=description),
            )
        return tuple(out.values())

    # -- responses ------------------------------------------------------------------------

    def _responses(self, responses: Any, where: str, doc_file: str) -> Iterator[Response]:
        if not isinstance(responses, dict):
            return
        for status, resp in responses.items():
            r_where = join(where, str(status))
            if str(status).startswith("x-"):
                continue
            read = self._deref(resp, r_where, doc_file, "response")
            if read is None:
                continue
            resp, r_file = read
            if not isinstance(resp, dict):
                raise self.error("a response must be an object", r_where)
            self._unread.extend(self._keys(resp, self.response_fields, r_where))
            schema, example = self.response_content(resp, r_where, r_file)
            if example is None and schema is not None:
                example = schema.get("example")
            yield Response(
                status=str(status),
                description=text(resp.get("description")),
                schema=schema,
                example=example,
                links=self._links(resp.get("links"), join(r_where, "links"), r_file),
            )

    def _links(self, links: Any, where: str, doc_file: str) -> dict[str, dict[str, Any]]:
        """A response's ``links``, each ``$ref`` resolved; a link that is not an object
        is skipped (it could only ever be ignored)."""
        if not isinstance(links, dict):
            return {}
        out: dict[str, dict[str, Any]] = {}
        for name, link in links.items():
            read = self._deref(link, join(where, str(name)), doc_file, "link")
            if read is not None and isinstance(read[0], dict):
                out[str(name)] = read[0]
        return out

    def response_content(
        self, resp: Mapping[str, Any], where: str, doc_file: str
    ) -> tuple[dict[str, Any] | None, Any]:
        content = resp.get("content")
        if not isinstance(content, dict) or not content:
            return None, None
        media_type = pick_media(content)
        media = content[media_type]
        if not isinstance(media, dict):
            return None, None
        m_where = join(where, f"content.{media_type}")
        schema = None
        if media.get("schema") is not None:
            schema = self.resolver.schema(
                media["schema"], join(m_where, "schema"), doc_file=doc_file
            )
        return schema, self._media_example(media, m_where, doc_file)

    def _media_example(self, media: Mapping[str, Any], where: str, doc_file: str) -> Any:
        if "example" in media:
            return media["example"]
        examples = media.get("examples")
        if isinstance(examples, dict):
            for name, ex in examples.items():
                read = self._deref(ex, join(where, f"examples.{name}"), doc_file, "example")
                if read is not None and isinstance(read[0], dict) and "value" in read[0]:
                    return read[0]["value"]
        return None


def flag(value: Any) -> bool:
    """OpenAPI's booleans as specs write them: ``true``, and ``"true"`` (Spotify's)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _split_path_key(path: str) -> tuple[str, list[tuple[str, str]]]:
    """``/responses/{id}/items?beta=true`` -> (``/responses/{id}/items``, [("beta", "true")]);
    a fragment (Box's ``/web_links/{id}#add_shared_link``) only names a variant."""
    path = path.partition("#")[0]
    path, _, query = path.partition("?")
    path = path if path.startswith("/") else "/" + path
    return path, parse_qsl(query, keep_blank_values=True) if query else []


def pick_media(content: Mapping[str, Any]) -> str:
    """JSON first, then form bodies, else the first listed media type."""
    keys = [str(k) for k in content]
    for key in keys:
        if _JSON_MEDIA.match(key) and key not in ("*/*", "application/*"):
            return key
    for key in keys:
        if key.lower().split(";")[0].strip() in FORM_MEDIA:
            return key
    return keys[0]


def body_parameters(schema: Mapping[str, Any]) -> list[Parameter]:
    """The body's fields as parameters (see :func:`object_properties`). A field the
    schema requires but does not describe (Box's ``/oauth2/revoke`` requires
    ``grant_type``) is a field all the same, of any type."""
    kind = schema.get("type")
    if (isinstance(kind, str) and kind != "object") or (
        isinstance(kind, list) and "object" not in kind
    ):
        return []  # a list or a text body has no fields (Box's JSON-patch lists)
    properties, required = object_properties(schema)
    for name in sorted(required - set(properties)):
        properties[name] = {}
    return [
        Parameter(
            name=name,
            location="body",
            # a boolean schema: true allows any value, false none
            schema=prop if isinstance(prop, dict) else ({"not": {}} if prop is False else {}),
            # a readOnly property is the server's to send: required in responses only
            required=name in required and not (isinstance(prop, dict) and prop.get("readOnly")),
            description=text(prop.get("description")) if isinstance(prop, dict) else "",
        )
        for name, prop in properties.items()
    ]


def object_properties(
    schema: Mapping[str, Any], _depth: int = 0
) -> tuple[dict[str, Any], set[str]]:
    """The properties an object schema can have and the ones it always requires, looking
    through compositions: ``allOf`` adds every part's properties and requirements;
    ``oneOf`` / ``anyOf`` add every branch's properties, and require what every branch
    requires (a discriminator property usually is).

    >>> object_properties({"oneOf": [
    ...     {"properties": {"type": {}, "a": {}}, "required": ["type", "a"]},
    ...     {"properties": {"type": {}, "b": {}}, "required": ["type"]}]})
    ({'type': {}, 'a': {}, 'b': {}}, {'type'})
    """
    properties: dict[str, Any] = {}
    required = set(required_names(schema))
    if _depth > 32:  # compositions nested this deep are recursion in disguise
        return properties, required
    props = schema.get("properties")
    if isinstance(props, dict):
        properties.update(props)
    for part in _list(schema.get("allOf")):
        sub_props, sub_required = object_properties(part, _depth + 1)
        for k, v in sub_props.items():
            properties.setdefault(k, v)
        required |= sub_required
    for key in ("oneOf", "anyOf"):
        branches = _list(schema.get(key))
        if not branches:
            continue
        common: set[str] | None = None
        alternatives: dict[str, list[Any]] = {}
        for part in branches:
            sub_props, sub_required = object_properties(part, _depth + 1)
            for k, v in sub_props.items():
                seen = alternatives.setdefault(k, [])
                if not any(v is other or v == other for other in seen):
                    seen.append(v)
            common = sub_required if common is None else common & sub_required
        for k, seen in alternatives.items():
            # a field the branches document differently takes what any of them takes
            properties.setdefault(k, seen[0] if len(seen) == 1 else {"anyOf": seen})
        required |= common or set()
    return properties, required


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
