"""Spec loaders: every supported API-doc format into :class:`~autofeedback.Operation` values.

Formats, auto-detected by :func:`load_spec`:

* OpenAPI 3.0 / 3.1 and Swagger 2.0 (JSON or YAML), every ``$ref`` resolved (local ones,
  and ones into other files next to the spec when loaded from a file); recursive schemas
  are cut after their first expansion (the cyclic reference becomes ``{}``);
* OpenAI tools (``[{"type": "function", "function": {...}}]``), bare function lists,
  one function, ``{"tools": [...]}`` / ``{"functions": [...]}``; BFCL type names
  (``dict``, ``float``, ``tuple``, ``any``) are mapped to JSON Schema;
* API-Bank docs (``{"name", "description", "input_parameters", "output_parameters"}``).

Anything else raises :class:`~autofeedback.SpecError` naming the source and the place.
Real-world specs are often slightly invalid (missing ``in`` defaults, no leading ``/``
on a path, dangling ``required`` names); those load. Only what makes an operation
impossible to describe (no ``name`` on a parameter, a ``$ref`` that points nowhere, a
document that is not a spec at all) is an error.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from autofeedback._exceptions import SpecError
from autofeedback._model import Location, Operation, Parameter, Response

__all__ = ["load_spec", "load_spec_file"]

_HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAM_LOCATIONS = ("path", "query", "header", "cookie")
_MAX_EXTERNAL_FILES = 64
#: $ref expansions allowed per top-level schema. Cutting only cycles still leaves every
#: simple path through a densely self-referencing schema graph (factorial in its size);
#: past the budget, references not expanded before become ``{"x-truncated-ref": ...}``.
_REF_BUDGET = 400
#: Schema nodes one top-level schema may expand to (YAML aliases can nest exponentially).
_NODE_BUDGET = 200_000

Loaded = tuple[list[Operation], list[str]]


# -- entry points -------------------------------------------------------------------


def load_spec(document: Any, *, source: str, base_dir: Path | None = None) -> Loaded:
    """Load an already-parsed spec document (or its JSON/YAML text), detecting the format.

    Returns the operations and the server URLs. ``base_dir`` lets ``$ref`` reach other
    files (relative to it).

    >>> ops, servers = load_spec([{"name": "ping", "parameters": {"type": "dict",
    ...     "properties": {"n": {"type": "float"}}, "required": ["n"]}}], source="<tools>")
    >>> ops[0].parameters[0].schema, ops[0].parameters[0].required
    ({'type': 'number'}, True)
    """
    if isinstance(document, (str, bytes)):
        text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
        document = _parse_text(text, source)
    try:
        ops, servers = _dispatch(document, source, base_dir)
    except SpecError:
        raise
    except RecursionError as exc:
        raise SpecError("spec is nested too deeply", source=source) from exc
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        # A safety net: the loaders check shapes where they read them, but a spec is
        # untrusted input and must never surface as a traceback.
        raise SpecError(f"malformed spec ({type(exc).__name__}: {exc})", source=source) from exc
    if not ops:
        raise SpecError("the spec describes no operations", source=source)
    return _dedupe(ops), list(dict.fromkeys(servers))


def load_spec_file(path: Path) -> Loaded:
    """Load a spec file: JSON or YAML (recognised by content), or ``.jsonl`` with one
    API-Bank doc or function per line.

    >>> ops, servers = load_spec_file(Path("tests/data/specs/swagger.json"))  # doctest: +SKIP
    >>> [op.name for op in ops], servers[0]
    (['searchBooks', 'addBook', 'POST /books/{isbn}/cover'], 'https://library.example.org/api/v2')
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text (byte {exc.start})", source=source) from exc
    except OSError as exc:
        raise SpecError(f"cannot read the file: {exc.strerror or exc}", source=source) from exc
    if Path(path).suffix.lower() in (".jsonl", ".ndjson"):
        document: Any = _parse_json_lines(text, source)
    else:
        document = _parse_text(text, source)
    return load_spec(document, source=source, base_dir=Path(path).resolve().parent)


# -- parsing text ---------------------------------------------------------------------


class _YamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with YAML 1.2 scalars: only ``true``/``false`` are booleans
    (a parameter named ``on`` or an enum value ``no`` stays a string) and timestamps stay
    the text the author wrote (``example: 2020-01-31``)."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YamlLoader)  # a SafeLoader subclass: no arbitrary objects


def _parse_text(text: str, source: str) -> Any:
    stripped = text.lstrip()
    if not stripped:
        raise SpecError("the file is empty", source=source)
    if stripped[0] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and _looks_like_json_lines(text):
                return _parse_json_lines(text, source)
            json_error = exc
        # JSON-looking text may still be YAML flow style; report the JSON error if not.
        try:
            return _jsonify(_load_yaml(text), {})
        except yaml.YAMLError:
            raise SpecError(
                f"invalid JSON: {json_error.msg}",
                source=source,
                where=f"line {json_error.lineno}, column {json_error.colno}",
            ) from json_error
    try:
        document = _load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"invalid YAML: {problem}", source=source, where=where) from exc
    if not isinstance(document, (dict, list)):
        raise SpecError("not a JSON or YAML document (expected an object or a list)", source=source)
    return _jsonify(document, {})


def _looks_like_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) > 1 and all(line.lstrip()[:1] in "{[" for line in lines)


def _parse_json_lines(text: str, source: str) -> list[Any]:
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SpecError(
                f"invalid JSON: {exc.msg}",
                source=source,
                where=f"line {number}, column {exc.colno}",
            ) from exc
    if not items:
        raise SpecError("the file is empty", source=source)
    return items


def _jsonify(value: Any, memo: dict[int, Any]) -> Any:
    """YAML gives int keys (``200:``) and dates; make it the JSON data model. ``memo``
    keeps YAML anchors shared (and recursive aliases finite)."""
    if isinstance(value, dict):
        if id(value) in memo:
            return memo[id(value)]
        out: dict[str, Any] = {}
        memo[id(value)] = out
        for k, v in value.items():
            out[_yaml_key(k)] = _jsonify(v, memo)
        return out
    if isinstance(value, list):
        if id(value) in memo:
            return memo[id(value)]
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(_jsonify(v, memo) for v in value)
        return items
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _yaml_key(key: Any) -> str:
    if isinstance(key, bool):
        return str(key).lower()
    if isinstance(key, (_dt.date, _dt.datetime)):
        return key.isoformat()
    return key if isinstance(key, str) else str(key)


# -- format detection -----------------------------------------------------------------


def _dispatch(document: Any, source: str, base_dir: Path | None) -> Loaded:
    if isinstance(document, dict):
        if "openapi" in document or "swagger" in document or "paths" in document:
            return _OpenApiLoader(document, source, base_dir).load()
        for key in ("tools", "functions"):
            if isinstance(document.get(key), list):
                return _load_callables(document[key], source, prefix=f"{key}"), []
        return _load_callables([document], source, prefix="", single=True), []
    if isinstance(document, list):
        if not document:
            raise SpecError("the spec is an empty list", source=source)
        return _load_callables(document, source, prefix=""), []
    raise SpecError(
        f"not a spec: expected an object or a list, got {type(document).__name__}",
        source=source,
    )


def _dedupe(ops: list[Operation]) -> list[Operation]:
    """Keep the first operation of each name: later ones would be unreachable by name."""
    seen: set[str] = set()
    out: list[Operation] = []
    for op in ops:
        if op.name not in seen:
            seen.add(op.name)
            out.append(op)
    return out


def _join(prefix: str, part: str) -> str:
    if part.startswith("["):
        return f"{prefix}{part}"
    return f"{prefix}.{part}" if prefix else part


# -- function-style specs (OpenAI tools, BFCL, API-Bank) -----------------------------------


def _load_callables(
    items: list[Any], source: str, *, prefix: str, single: bool = False
) -> list[Operation]:
    ops: list[Operation] = []
    for i, item in enumerate(items):
        where = prefix if single else _join(prefix, f"[{i}]")
        if not isinstance(item, dict):
            raise SpecError(
                f"expected a function or API description, got {type(item).__name__}",
                source=source,
                where=where,
            )
        if item.get("type") == "function" and isinstance(item.get("function"), dict):
            ops.append(_load_function(item["function"], source, _join(where, "function")))
        elif "input_parameters" in item or "output_parameters" in item:
            ops.append(_load_api_bank(item, source, where))
        elif "parameters" in item or ("name" in item and ("description" in item or len(item) == 1)):
            ops.append(_load_function(item, source, where))
        else:
            raise SpecError(
                "not a recognised spec: expected an OpenAPI/Swagger document, an OpenAI "
                "tool or function ({name, description, parameters}) or an API-Bank doc "
                "({name, description, input_parameters})",
                source=source,
                where=where,
            )
    return ops


def _name_of(item: Mapping[str, Any], source: str, where: str, what: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"{what} has no 'name'", source=source, where=where)
    return name.strip()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _load_function(fn: Mapping[str, Any], source: str, where: str) -> Operation:
    name = _name_of(fn, source, where, "function")
    params_schema = fn.get("parameters")
    if params_schema is None:
        params_schema = {}
    if not isinstance(params_schema, dict):
        raise SpecError(
            "'parameters' must be a JSON Schema object",
            source=source,
            where=_join(where, "parameters"),
        )
    # Pydantic-made tools carry $defs and local refs: resolve them against the schema.
    resolver = _Resolver(params_schema, source, None)
    resolved = resolver.schema(params_schema, _join(where, "parameters"), fold_nullable=False)
    resolved = _bfcl_schema(resolved)
    properties = resolved.get("properties") or {}
    if not isinstance(properties, dict):
        raise SpecError(
            "'properties' must be an object",
            source=source,
            where=_join(where, "parameters.properties"),
        )
    required = _required_names(resolved)
    parameters: list[Parameter] = []
    for pname, pschema in properties.items():
        pschema = dict(pschema) if isinstance(pschema, dict) else {}
        optional = pschema.pop("optional", None) is True
        parameters.append(
            Parameter(
                name=str(pname),
                location="argument",
                schema=pschema,
                required=pname in required and not optional,
                description=_text(pschema.get("description")),
            )
        )
    responses: tuple[Response, ...] = ()
    if isinstance(fn.get("response"), dict):
        responses = (Response("200", schema=_bfcl_schema(fn["response"])),)
    return Operation(
        name=name,
        description=_text(fn.get("description")),
        parameters=tuple(parameters),
        responses=responses,
        source=source,
    )


def _required_names(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required")
    if isinstance(required, list):
        return {r for r in required if isinstance(r, str)}
    return set()


#: BFCL / Python type names -> JSON Schema type (``None``: no type constraint).
_TYPE_NAMES: Mapping[str, str | None] = {
    "dict": "object",
    "object": "object",
    "float": "number",
    "number": "number",
    "double": "number",
    "tuple": "array",
    "array": "array",
    "list": "array",
    "any": None,
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "null": "null",
    "none": "null",
}


def _bfcl_schema(schema: Any) -> Any:
    """Map BFCL/Python type names to JSON Schema, recursively."""
    if isinstance(schema, list):
        return [_bfcl_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            mapped = _map_type(value)
            if mapped is not None:
                out["type"] = mapped
        elif key in ("items", "additionalProperties", "not", "contains", "additionalItems"):
            out[key] = _bfcl_schema(value)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            out[key] = _bfcl_schema(value) if isinstance(value, list) else value
        elif key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(
            value, dict
        ):
            out[key] = {k: _bfcl_schema(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _map_type(value: Any) -> Any:
    if isinstance(value, list):
        mapped = [_map_type(v) for v in value]
        if any(m is None for m in mapped):
            return None  # "any" among the alternatives: no constraint
        return list(dict.fromkeys(mapped))
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TYPE_NAMES:
            return _TYPE_NAMES[key]
    return None  # an unknown type name cannot be checked; JSON Schema would reject it


# API-Bank types: "str", "int", "list(str)", "datetime"...
_API_BANK_LIST = re.compile(r"^(?:list|array|tuple)\s*[\[(]\s*(.+?)\s*[\])]$", re.IGNORECASE)
_API_BANK_TYPES: Mapping[str, Mapping[str, Any]] = {
    "str": {"type": "string"},
    "string": {"type": "string"},
    "int": {"type": "integer"},
    "integer": {"type": "integer"},
    "float": {"type": "number"},
    "number": {"type": "number"},
    "bool": {"type": "boolean"},
    "boolean": {"type": "boolean"},
    "list": {"type": "array"},
    "array": {"type": "array"},
    "tuple": {"type": "array"},
    "dict": {"type": "object"},
    "object": {"type": "object"},
    "json": {},
    "any": {},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
}

#: Descriptions that make an API-Bank input parameter optional (API-Bank has no
#: ``required`` list): "[Optional] ...", "Default is auto.", "Only needed for the
#: first call." (ForgotPassword's two-step parameters), "if not specified".
_API_BANK_OPTIONAL = re.compile(
    r"\boptional\b|\bdefaults?\b|\bonly needed\b|\bif not (?:specified|provided|given)\b",
    re.IGNORECASE,
)


def api_bank_type(name: Any) -> dict[str, Any]:
    """``"list(str)"`` -> ``{"type": "array", "items": {"type": "string"}}``."""
    if not isinstance(name, str):
        return {}
    key = name.strip()
    m = _API_BANK_LIST.match(key)
    if m:
        return {"type": "array", "items": api_bank_type(m.group(1))}
    return dict(_API_BANK_TYPES.get(key.lower(), {}))


def api_bank_optional(description: str) -> bool:
    """Whether an API-Bank parameter description marks the parameter optional."""
    return bool(_API_BANK_OPTIONAL.search(description))


def _load_api_bank(doc: Mapping[str, Any], source: str, where: str) -> Operation:
    name = _name_of(doc, source, where, "API")
    inputs = doc.get("input_parameters") or {}
    if not isinstance(inputs, dict):
        raise SpecError(
            "'input_parameters' must be an object",
            source=source,
            where=_join(where, "input_parameters"),
        )
    parameters: list[Parameter] = []
    for pname, spec in inputs.items():
        spec = spec if isinstance(spec, dict) else {"type": spec}
        description = _text(spec.get("description"))
        schema = api_bank_type(spec.get("type"))
        if description:
            schema["description"] = description
        parameters.append(
            Parameter(
                name=str(pname),
                location="argument",
                schema=schema,
                required=not api_bank_optional(description),
                description=description,
            )
        )
    outputs = doc.get("output_parameters") or {}
    responses: tuple[Response, ...] = ()
    if isinstance(outputs, dict) and outputs:
        props = {}
        for oname, spec in outputs.items():
            spec = spec if isinstance(spec, dict) else {"type": spec}
            props[str(oname)] = api_bank_type(spec.get("type")) | (
                {"description": _text(spec["description"])} if spec.get("description") else {}
            )
        responses = (Response("200", schema={"type": "object", "properties": props}),)
    return Operation(
        name=name,
        description=_text(doc.get("description")),
        parameters=tuple(parameters),
        responses=responses,
        source=source,
    )


# -- $ref resolution --------------------------------------------------------------------


class _Resolver:
    """Resolves ``$ref`` (local JSON pointers and, from a file, other files) and expands
    schemas, cutting recursion: a reference met again inside its own expansion becomes
    ``{}``."""

    def __init__(self, root: Any, source: str, base_dir: Path | None) -> None:
        self.root = root
        self.source = source
        self.base_dir = base_dir
        self._files: dict[Path, Any] = {}
        self._memo: dict[tuple[str, bool], Any] = {}
        self._budget = _REF_BUDGET
        self._nodes = _NODE_BUDGET

    # A document context is (document, its file or "" for the root).
    def lookup(self, ref: str, where: str, doc_file: str) -> tuple[Any, str, str]:
        """The target of ``ref`` (not expanded), its document file and its key."""
        file_part, _, pointer = ref.partition("#")
        if file_part:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", file_part):
                raise SpecError(
                    f"remote $ref {ref!r} is not supported (no network access)",
                    source=self.source,
                    where=where,
                )
            doc, doc_file = self._external(file_part, where, doc_file)
        else:
            doc = self.root if not doc_file else self._files[Path(doc_file)]
        target = doc
        for raw in pointer.split("/")[1:] if pointer else []:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise SpecError(
                    f"unresolvable $ref {ref!r}", source=self.source, where=_join(where, "$ref")
                )
        return target, doc_file, f"{doc_file}#{pointer}"

    def _external(self, file_part: str, where: str, doc_file: str) -> tuple[Any, str]:
        base = Path(doc_file).parent if doc_file else self.base_dir
        if base is None:
            raise SpecError(
                f"$ref to another file ({file_part!r}) needs the spec to be loaded from a file",
                source=self.source,
                where=_join(where, "$ref"),
            )
        path = (base / unquote(file_part)).resolve()
        if path not in self._files:
            if len(self._files) >= _MAX_EXTERNAL_FILES:
                raise SpecError(
                    "too many referenced files", source=self.source, where=_join(where, "$ref")
                )
            try:
                text = path.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                raise SpecError(
                    f"cannot read referenced file {file_part!r}: {exc}",
                    source=self.source,
                    where=_join(where, "$ref"),
                ) from exc
            self._files[path] = _parse_text(text, str(path))
        return self._files[path], str(path)

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
        self,
        schema: Any,
        where: str,
        *,
        fold_nullable: bool = True,
        doc_file: str = "",
        stack: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """``schema`` with every ``$ref`` expanded and OpenAPI 3.0 quirks normalised."""
        self._budget = _REF_BUDGET
        self._nodes = _NODE_BUDGET
        out, _ = self._schema(schema, where, fold_nullable, doc_file, stack)
        return out if isinstance(out, dict) else {}

    def _schema(
        self, schema: Any, where: str, fold: bool, doc_file: str, stack: tuple[str, ...]
    ) -> tuple[Any, bool]:
        """Returns (expanded, whether a cycle was cut inside: then it is not memoised)."""
        self._nodes -= 1
        if self._nodes < 0:
            raise SpecError(
                f"schema expands to more than {_NODE_BUDGET} nodes", source=self.source, where=where
            )
        if isinstance(schema, list):
            cut = False
            items = []
            for i, s in enumerate(schema):
                value, c = self._schema(s, f"{where}[{i}]", fold, doc_file, stack)
                items.append(value)
                cut = cut or c
            return items, cut
        if not isinstance(schema, dict):
            return schema, False
        ref = schema.get("$ref")
        if isinstance(ref, str):
            try:
                target, target_file, key = self.lookup(ref, where, doc_file)
            except SpecError:
                if ref.startswith("#"):
                    # A dangling local schema ref (ToolAlpaca's AviationAPI has one): the
                    # schema is unknown, not the operation; leave it unconstrained.
                    return {"x-unresolved-ref": ref}, False
                raise
            if key in stack:
                return {}, True
            memo_key = (key, fold)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if memo_key in self._memo and not siblings:
                return self._memo[memo_key], False
            if self._budget <= 0:
                return {"x-truncated-ref": ref}, True
            self._budget -= 1
            expanded, cut = self._schema(target, where, fold, target_file, (*stack, key))
            if not cut and not siblings:
                self._memo[memo_key] = expanded
            if siblings and isinstance(expanded, dict):
                # OpenAPI 3.1 / JSON Schema 2020-12: keywords beside $ref also apply.
                rest, c2 = self._schema(siblings, where, False, doc_file, stack)
                expanded = {**expanded, **rest}
                if fold:
                    expanded = _normalise_openapi_schema(expanded)
                cut = cut or c2
            return expanded, cut
        out: dict[str, Any] = {}
        cut = False
        for key, value in schema.items():
            if key in (
                "properties",
                "patternProperties",
                "$defs",
                "definitions",
                "dependentSchemas",
            ):
                if isinstance(value, dict):
                    sub: dict[str, Any] = {}
                    for name, s in value.items():
                        sub[name], c = self._schema(
                            s, _join(where, f"{key}.{name}"), fold, doc_file, stack
                        )
                        cut = cut or c
                    out[key] = sub
                else:
                    out[key] = value
            elif key in (
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
            ):
                out[key], c = self._schema(value, _join(where, key), fold, doc_file, stack)
                cut = cut or c
            else:
                out[key] = value
        if fold:
            out = _normalise_openapi_schema(out)
        return out, cut


def _normalise_openapi_schema(schema: dict[str, Any]) -> dict[str, Any]:
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
    if schema.get("type") == "file":  # Swagger 2.0 upload
        schema["type"] = "string"
        schema.setdefault("format", "binary")
    return schema


_ANNOTATIONS = frozenset({"description", "title", "example", "examples", "default", "deprecated"})


# -- OpenAPI 3.x and Swagger 2.0 -----------------------------------------------------------


_JSON_MEDIA = re.compile(r"^application/(?:[\w.+-]*\+)?json\b|^\*/\*$|^application/\*$", re.I)
_FORM_MEDIA = ("application/x-www-form-urlencoded", "multipart/form-data")

# Swagger 2.0 collectionFormat -> OpenAPI 3 (style, explode)
_COLLECTION_FORMATS: Mapping[str, tuple[str, bool]] = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "tsv": ("tabDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}

# Swagger 2.0 non-body parameters carry their schema inline.
_SWAGGER_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "x-nullable",
    "example",
)


class _OpenApiLoader:
    def __init__(self, doc: dict[str, Any], source: str, base_dir: Path | None) -> None:
        self.doc = doc
        self.source = source
        self.swagger = "swagger" in doc and "openapi" not in doc
        if self.swagger and not str(doc["swagger"]).startswith("2"):
            raise SpecError(
                f"unsupported Swagger version {doc['swagger']!r} (expected 2.0)",
                source=source,
                where="swagger",
            )
        if "openapi" in doc and not str(doc["openapi"]).startswith("3"):
            raise SpecError(
                f"unsupported OpenAPI version {doc['openapi']!r} (expected 3.0 or 3.1)",
                source=source,
                where="openapi",
            )
        self.resolver = _Resolver(doc, source, base_dir)

    def error(self, message: str, where: str) -> SpecError:
        return SpecError(message, source=self.source, where=where)

    def load(self) -> Loaded:
        paths = self.doc.get("paths")
        if paths is None:
            paths = {}
        if not isinstance(paths, dict):
            raise self.error("'paths' must be an object", "paths")
        self._schemes = self._security_schemes()
        ops: list[Operation] = []
        for path, item in paths.items():
            ops.extend(self._path_item(str(path), item))
        if not ops:
            raise self.error("the spec describes no operations", "paths")
        return ops, self._servers()

    def _servers(self) -> list[str]:
        if self.swagger:
            host = self.doc.get("host")
            base = self.doc.get("basePath") or ""
            base = base if isinstance(base, str) else ""
            if isinstance(host, str) and host:
                schemes = self.doc.get("schemes")
                schemes = schemes if isinstance(schemes, list) else []
                schemes = [s for s in schemes if isinstance(s, str)] or ["https"]
                return [f"{s}://{host}{base}".rstrip("/") for s in schemes]
            return [base] if base.strip("/") else []
        servers = self.doc.get("servers") or []
        out = []
        for server in servers if isinstance(servers, list) else []:
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                continue
            url: str = server["url"]
            variables = server.get("variables") or {}
            if isinstance(variables, dict):
                for name, var in variables.items():
                    if isinstance(var, dict) and "default" in var:
                        url = url.replace("{" + str(name) + "}", str(var["default"]))
            out.append(url.rstrip("/") if url != "/" else url)
        return out

    def _path_item(self, path: str, item: Any) -> Iterator[Operation]:
        where = f"paths.{path}"
        item, doc_file = self.resolver.deref(item, where)
        if not isinstance(item, dict):
            raise self.error("a path item must be an object", where)
        norm_path = path if path.startswith("/") else "/" + path
        common = self._parameter_list(item.get("parameters"), _join(where, "parameters"), doc_file)
        for method in _HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            op_where = _join(where, method)
            if not isinstance(op, dict):
                raise self.error("an operation must be an object", op_where)
            yield self._operation(method, norm_path, op, common, op_where, doc_file)

    def _parameter_list(
        self, params: Any, where: str, doc_file: str
    ) -> list[tuple[dict[str, Any], str, str]]:
        """Dereferenced parameter objects with the place each came from."""
        if params is None:
            return []
        if not isinstance(params, list):
            raise self.error("'parameters' must be a list", where)
        out = []
        for i, p in enumerate(params):
            p_where = f"{where}[{i}]"
            p, p_file = self.resolver.deref(p, p_where, doc_file)
            if not isinstance(p, dict):
                raise self.error("a parameter must be an object", p_where)
            name = p.get("name")
            if not isinstance(name, str) or not name:
                raise self.error("parameter has no 'name'", p_where)
            loc = p.get("in")
            allowed = (*_PARAM_LOCATIONS, "body", "formData") if self.swagger else _PARAM_LOCATIONS
            if loc not in allowed:
                shown = repr(loc) if loc is not None else "nothing"
                raise self.error(
                    f"parameter {name!r} has 'in' {shown}; expected one of {', '.join(allowed)}",
                    p_where,
                )
            out.append((p, p_where, p_file))
        return out

    def _operation(
        self,
        method: str,
        path: str,
        op: dict[str, Any],
        common: list[tuple[dict[str, Any], str, str]],
        where: str,
        doc_file: str,
    ) -> Operation:
        own = self._parameter_list(op.get("parameters"), _join(where, "parameters"), doc_file)
        merged: dict[tuple[str, str], tuple[dict[str, Any], str, str]] = {}
        for entry in (*common, *own):
            merged[(entry[0]["name"], entry[0]["in"])] = entry  # operation level wins
        parameters: list[Parameter] = []
        body_schema: dict[str, Any] | None = None
        body_required = False
        form_fields: list[tuple[dict[str, Any], str, str]] = []
        for p, p_where, p_file in merged.values():
            if p["in"] == "body":
                body_schema = self.resolver.schema(
                    p.get("schema") or {}, _join(p_where, "schema"), doc_file=p_file
                )
                body_required = p.get("required") is True
                parameters.extend(self._body_parameters(body_schema))
            elif p["in"] == "formData":
                form_fields.append((p, p_where, p_file))
            else:
                parameters.append(self._parameter(p, p_where, p_file))
        declared = {p.name for p in parameters if p.location == "path"}
        for var in dict.fromkeys(re.findall(r"\{([^{}/]+)\}", path)):
            if var not in declared:
                # The template needs it even when the spec forgets to document it.
                parameters.append(Parameter(var, "path", {"type": "string"}, required=True))
        if form_fields:
            body_schema, form_params = self._swagger_form(form_fields)
            body_required = any(p.required for p in form_params)
            parameters.extend(form_params)
        if not self.swagger and op.get("requestBody") is not None:
            body_schema, body_params, body_required = self._request_body(
                op["requestBody"], _join(where, "requestBody"), doc_file
            )
            parameters.extend(body_params)
        op_id = op.get("operationId")
        name = op_id.strip() if isinstance(op_id, str) and op_id.strip() else None
        summary, description = _text(op.get("summary")), _text(op.get("description"))
        text = "\n\n".join(dict.fromkeys(t for t in (summary, description) if t))
        tags = op.get("tags")
        return Operation(
            name=name or f"{method.upper()} {path}",
            description=text,
            method=method.upper(),
            path=path,
            parameters=tuple(parameters),
            responses=tuple(
                self._responses(op.get("responses"), _join(where, "responses"), doc_file)
            ),
            body_schema=body_schema,
            body_required=body_required,
            source=self.source,
            tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
            auth_parameters=self._auth_parameters(op),
        )

    def _security_schemes(self) -> dict[str, Any]:
        if self.swagger:
            schemes = self.doc.get("securityDefinitions")
        else:
            components = self.doc.get("components")
            schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        if not isinstance(schemes, dict):
            return {}
        out: dict[str, Any] = {}
        for name, scheme in schemes.items():
            scheme, _ = self.resolver.deref(scheme, f"securitySchemes.{name}")
            if isinstance(scheme, dict):
                out[str(name)] = scheme
        return out

    def _auth_parameters(self, op: Mapping[str, Any]) -> tuple[Parameter, ...]:
        """Where the operation's credentials travel. The operation's ``security`` wins over
        the document's; with neither, every defined scheme is accepted (credentials are
        never required by a check, only recognised, and specs often forget ``security``)."""
        if not self._schemes:
            return ()
        requirements = op.get("security", self.doc.get("security"))
        if isinstance(requirements, list):
            names = [str(n) for req in requirements if isinstance(req, dict) for n in req]
        else:
            names = list(self._schemes)
        out: dict[tuple[str, str], Parameter] = {}
        for name in names:
            scheme = self._schemes.get(name)
            if scheme is None:
                continue
            description = _text(scheme.get("description"))
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

    def _parameter(self, p: dict[str, Any], where: str, doc_file: str) -> Parameter:
        loc: Location = p["in"]
        if self.swagger:
            raw = {k: p[k] for k in _SWAGGER_SCHEMA_KEYS if k in p}
            schema = self.resolver.schema(raw, where, doc_file=doc_file)
            style, explode = self._swagger_style(p, loc)
        else:
            raw_schema = p.get("schema")
            if raw_schema is None and isinstance(p.get("content"), dict):
                # content-style parameter: the first media type's schema
                for media in p["content"].values():
                    if isinstance(media, dict):
                        raw_schema = media.get("schema")
                        break
            schema = self.resolver.schema(
                raw_schema or {}, _join(where, "schema"), doc_file=doc_file
            )
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
            required=loc == "path" or p.get("required") is True,
            description=_text(p.get("description")),
            style=style,
            explode=explode,
        )

    @staticmethod
    def _swagger_style(p: Mapping[str, Any], loc: str) -> tuple[str, bool]:
        fmt = p.get("collectionFormat", "csv")
        style, explode = _COLLECTION_FORMATS.get(str(fmt), ("form", False))
        if loc in ("path", "header") and style == "form":
            style = "simple"
        if p.get("type") != "array":
            explode = style == "form"  # OpenAPI 3's default; moot for scalars
        return style, explode

    def _swagger_form(
        self, fields: list[tuple[dict[str, Any], str, str]]
    ) -> tuple[dict[str, Any], list[Parameter]]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        params: list[Parameter] = []
        for p, p_where, p_file in fields:
            raw = {k: p[k] for k in _SWAGGER_SCHEMA_KEYS if k in p}
            schema = self.resolver.schema(raw, p_where, doc_file=p_file)
            properties[p["name"]] = schema
            if p.get("required") is True:
                required.append(p["name"])
            style, explode = self._swagger_style(p, "query")
            params.append(
                Parameter(
                    name=p["name"],
                    location="body",
                    schema=schema,
                    required=p.get("required") is True,
                    description=_text(p.get("description")),
                    style=style,
                    explode=explode,
                )
            )
        body: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            body["required"] = required
        return body, params

    def _request_body(
        self, body: Any, where: str, doc_file: str
    ) -> tuple[dict[str, Any] | None, list[Parameter], bool]:
        body, body_file = self.resolver.deref(body, where, doc_file)
        if not isinstance(body, dict):
            raise self.error("'requestBody' must be an object", where)
        required = body.get("required") is True
        content = body.get("content")
        if not isinstance(content, dict) or not content:
            return None, [], required
        media_type = _pick_media(content)
        media = content[media_type]
        media_where = _join(where, f"content.{media_type}")
        if not isinstance(media, dict):
            return None, [], required
        schema = self.resolver.schema(
            media.get("schema") or {}, _join(media_where, "schema"), doc_file=body_file
        )
        structured = _JSON_MEDIA.match(media_type) or media_type.lower() in _FORM_MEDIA
        params = self._body_parameters(schema) if structured else []
        return schema, params, required

    def _body_parameters(self, schema: Mapping[str, Any]) -> list[Parameter]:
        properties, required = _object_properties(schema)
        return [
            Parameter(
                name=name,
                location="body",
                schema=prop if isinstance(prop, dict) else {},
                required=name in required,
                description=_text(prop.get("description")) if isinstance(prop, dict) else "",
            )
            for name, prop in properties.items()
        ]

    def _responses(self, responses: Any, where: str, doc_file: str) -> Iterator[Response]:
        if not isinstance(responses, dict):
            return
        for status, resp in responses.items():
            r_where = _join(where, str(status))
            if str(status).startswith("x-"):
                continue
            resp, r_file = self.resolver.deref(resp, r_where, doc_file)
            if not isinstance(resp, dict):
                raise self.error("a response must be an object", r_where)
            schema: dict[str, Any] | None = None
            example: Any = None
            if self.swagger:
                if resp.get("schema") is not None:
                    schema = self.resolver.schema(
                        resp["schema"], _join(r_where, "schema"), doc_file=r_file
                    )
                examples = resp.get("examples")
                if isinstance(examples, dict) and examples:
                    example = examples[_pick_media(examples)]
            else:
                content = resp.get("content")
                if isinstance(content, dict) and content:
                    media_type = _pick_media(content)
                    media = content[media_type]
                    if isinstance(media, dict):
                        m_where = _join(r_where, f"content.{media_type}")
                        if media.get("schema") is not None:
                            schema = self.resolver.schema(
                                media["schema"], _join(m_where, "schema"), doc_file=r_file
                            )
                        example = self._media_example(media, m_where, r_file)
            if example is None and schema is not None:
                example = schema.get("example")
            yield Response(
                status=str(status),
                description=_text(resp.get("description")),
                schema=schema,
                example=example,
            )

    def _media_example(self, media: Mapping[str, Any], where: str, doc_file: str) -> Any:
        if "example" in media:
            return media["example"]
        examples = media.get("examples")
        if isinstance(examples, dict):
            for name, ex in examples.items():
                ex, _ = self.resolver.deref(ex, _join(where, f"examples.{name}"), doc_file)
                if isinstance(ex, dict) and "value" in ex:
                    return ex["value"]
        return None


def _pick_media(content: Mapping[str, Any]) -> str:
    """JSON first, then form bodies, else the first listed media type."""
    keys = [str(k) for k in content]
    for key in keys:
        if _JSON_MEDIA.match(key) and key not in ("*/*", "application/*"):
            return key
    for key in keys:
        if key.lower() in _FORM_MEDIA:
            return key
    return keys[0]


def _object_properties(schema: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Top-level properties of an object schema, looking through ``allOf``."""
    properties: dict[str, Any] = {}
    required = _required_names(schema)
    props = schema.get("properties")
    if isinstance(props, dict):
        properties.update(props)
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        for part in all_of:
            if isinstance(part, dict):
                sub_props, sub_required = _object_properties(part)
                for k, v in sub_props.items():
                    properties.setdefault(k, v)
                required |= sub_required
    return properties, required
