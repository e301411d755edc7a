"""Requests that satisfy a spec, generated and checked *without* autofeedback's loader.

The real-spec benchmark (``real_specs.py``) needs requests that are right by the spec's
own definition, so that every error the scanner reports on them is a false error. This
module reads the raw spec document itself, generates values from its schemas and keeps a
request only when a real JSON-Schema validator accepts every value it carries:

* OpenAPI 3.0 schemas: ``openapi_schema_validator.OAS30WriteValidator`` (``nullable``,
  ``readOnly`` properties are not sent in requests), OpenAPI 3.1:
  ``OAS31Validator``; function docs (API-Bank, BFCL): ``jsonschema.Draft202012Validator``;
* every ``$ref`` resolved by the python-jsonschema team's ``referencing`` library, the
  whole document registered under one URI (``urn:spec``);
* the format checker on (a ``date-time`` must be one).

Specs contradict their own examples, so a generated request can fail; it is then
dropped and counted (:attr:`Generated.dropped`), never sent as "valid".

Generation, per operation: every required parameter and body field, plus each optional
one with probability ``optional`` (0 gives the minimal request); values from ``enum``,
``const``, ``example``/``default`` (when they validate), format-aware strings
(``date``, ``date-time``, ``email``, ``uri``, ``uuid``...), numbers inside their range;
``allOf`` merged, one branch of ``oneOf``/``anyOf`` picked (the ``discriminator``
property set to the branch's mapping key), ``nullable`` and 3.1 type arrays read as their
non-null type. A request body that is not ``required`` is sent only sometimes: leaving it
out is as valid as sending it.

    >>> spec = RawSpec.from_file(Path("../shared/data/restbench/tmdb_oas.json"))  # doctest: +SKIP
    >>> gen = generate(spec, spec.operations[0], random.Random(0))  # doctest: +SKIP
    >>> gen.request.record()  # doctest: +SKIP
    {'method': 'GET', 'url': 'https://api.themoviedb.org/3/movie/550?api_key=demo-key', ...}
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import json
import math
import random
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jsonschema
import yaml
from jsonschema.validators import extend
from openapi_schema_validator import (
    OAS30WriteValidator,
    OAS31Validator,
    oas30_format_checker,
    oas31_format_checker,
)
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4, DRAFT202012

__all__ = [
    "Generated",
    "RawOperation",
    "RawParam",
    "RawSpec",
    "SentRequest",
    "Unsatisfiable",
    "api_bank_functions",
    "bfcl_functions",
    "body_fields",
    "generate",
    "parameter_names",
    "slots",
    "validate",
]

SPEC_URI = "urn:spec"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: placeholder credentials for the spec's security schemes (never real ones)
DEMO_KEY = "demo-key"
_JSON_MEDIA = re.compile(r"^application/([\w.+-]*\+)?json(;.*)?$|^\*/\*$")
_FORM_MEDIA = ("application/x-www-form-urlencoded", "multipart/form-data")
_MAX_DEPTH = 8
#: headers a client sets from the media type and the auth scheme, not from parameters
_CLIENT_HEADERS = ("content-type", "accept", "authorization")


# The discriminator is a hint for finding the branch; the ``oneOf`` decides validity (OAS
# 3.1.1: it "MUST NOT change the validation outcome"). openapi-schema-validator enforces
# the implicit mapping by schema name, which OpenAI's 107 discriminators (role "user" ->
# ChatCompletionRequestUserMessage, no mapping) do not follow: every body would fail.
# It enforces it inside ``oneOf``/``anyOf``/``allOf``: use the plain JSON-Schema ones.
_PLAIN_COMPOSITION = ("oneOf", "anyOf", "allOf")
_OAS30 = extend(  # type: ignore[no-untyped-call]
    OAS30WriteValidator,
    {k: jsonschema.Draft4Validator.VALIDATORS[k] for k in _PLAIN_COMPOSITION},
)
_OAS31 = extend(  # type: ignore[no-untyped-call]
    OAS31Validator,
    {k: jsonschema.Draft202012Validator.VALIDATORS[k] for k in _PLAIN_COMPOSITION},
)


class Unsatisfiable(Exception):
    """No value can be generated for a schema (recursion too deep, an impossible pattern)."""


# -- the raw spec -------------------------------------------------------------------


@dataclass(frozen=True)
class RawParam:
    """One documented parameter as the raw spec gives it. ``pointer`` is the JSON pointer
    of its schema in the document (``None`` for function docs, whose schema is inline)."""

    name: str
    location: str  # path | query | header | cookie | body | argument
    schema: Any
    required: bool
    pointer: str | None = None
    style: str | None = None
    explode: bool | None = None
    content: str | None = None  # a parameter sent as ``content`` (JSON text)


@dataclass(frozen=True)
class RawOperation:
    """One operation: ``name`` is its ``operationId`` (or ``METHOD path``); ``path`` is
    the path key as written, which may carry a query string (``/x?beta=true``)."""

    name: str
    method: str | None
    path: str | None
    params: tuple[RawParam, ...]
    #: media type -> (JSON pointer of the body schema or None, inline schema)
    bodies: tuple[tuple[str, str | None, Any], ...] = ()
    body_required: bool = False
    auth: tuple[tuple[str, str, str], ...] = ()  # (location, name, value)
    #: the whole argument schema of a function-style operation
    arguments_schema: Any = None


@dataclass
class RawSpec:
    """A spec document, its operations and the validators for its schemas."""

    name: str
    kind: str  # "openapi" or "functions"
    doc: Any
    operations: list[RawOperation]
    base_url: str = ""
    version: str = "3.0"
    _validators: dict[str, Any] = field(default_factory=dict, repr=False)
    _registry: Any = field(default=None, repr=False)

    # -- loading --

    @classmethod
    def from_file(cls, path: Path, name: str | None = None) -> RawSpec:
        text = path.read_text(encoding="utf-8")
        if path.suffix in (".yaml", ".yml"):
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            doc = yaml.load(text, Loader=loader)
        else:
            doc = json.loads(text)
        return cls.from_openapi(doc, name or path.name)

    @classmethod
    def from_openapi(cls, doc: Mapping[str, Any], name: str) -> RawSpec:
        version = str(doc.get("openapi") or "")
        if not version.startswith("3."):
            raise ValueError(f"{name}: only OpenAPI 3.x documents are generated for")
        spec = cls(name, "openapi", doc, [], version="3.1" if version >= "3.1" else "3.0")
        spec.base_url = _base_url(doc)
        spec.operations = list(_openapi_operations(spec))
        return spec

    @classmethod
    def from_functions(cls, functions: Sequence[Mapping[str, Any]], name: str) -> RawSpec:
        """Function docs whose ``parameters`` are already JSON Schema objects (convert
        API-Bank and BFCL docs with :func:`api_bank_functions` / :func:`bfcl_functions`)."""
        ops = []
        for fn in functions:
            schema = fn.get("parameters") or {"type": "object", "properties": {}}
            required = set(schema.get("required") or ())
            params = tuple(
                RawParam(str(k), "argument", v, k in required)
                for k, v in (schema.get("properties") or {}).items()
            )
            ops.append(RawOperation(str(fn["name"]), None, None, params, arguments_schema=schema))
        return cls(name, "functions", {"functions": list(functions)}, ops, version="2020-12")

    # -- $ref and validation --

    def deref(self, schema: Any, pointer: str | None = None) -> tuple[Any, str | None]:
        """Follow local ``$ref`` chains (for generation only; validation resolves with
        ``referencing``). Returns the schema and its JSON pointer."""
        seen = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if not ref.startswith("#"):
                raise Unsatisfiable(f"external $ref {ref!r} (not generated for)")
            target = _pointer_get(self.doc, ref[1:])
            if self.version == "3.1" and len(schema) > 1:
                # 3.1: siblings of $ref apply too
                target = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            schema, pointer = target, ref[1:]
            seen += 1
            if seen > 50:
                raise Unsatisfiable(f"$ref cycle at {ref!r}")
        return schema, pointer

    def registry(self) -> Any:
        if self._registry is None:
            spec = DRAFT4 if self.version == "3.0" else DRAFT202012
            resource = Resource.from_contents(_plain(self.doc), default_specification=spec)
            self._registry = Registry().with_resource(SPEC_URI, resource)
        return self._registry

    def validator(self, pointer: str | None, schema: Any = None) -> Any:
        """A validator for the schema at ``pointer`` (or for ``schema`` itself)."""
        key = pointer if pointer is not None else json.dumps(schema, sort_keys=True, default=str)
        found = self._validators.get(key)
        if found is None:
            if self.kind == "functions":
                found = jsonschema.Draft202012Validator(
                    schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
                )
            else:
                root = {"$ref": SPEC_URI + "#" + quote(pointer, safe="/~")} if pointer else schema
                if self.version == "3.0":
                    found = _OAS30(
                        root, registry=self.registry(), format_checker=oas30_format_checker
                    )
                else:
                    found = _OAS31(
                        root, registry=self.registry(), format_checker=oas31_format_checker
                    )
            self._validators[key] = found
        return found

    def errors(self, pointer: str | None, schema: Any, value: Any) -> list[str]:
        try:
            return [e.message for e in self.validator(pointer, schema).iter_errors(value)]
        except Exception as exc:
            # (Spotify's ``"maximum": "50"``): the value cannot be shown valid, so drop it
            return [f"the validator cannot apply this schema: {type(exc).__name__}: {exc}"]


def _plain(value: Any) -> Any:
    """YAML dates and datetimes as ISO strings: JSON Schema knows no date type."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


def _pointer_get(doc: Any, pointer: str) -> Any:
    node = doc
    for part in pointer.split("/")[1:] if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, Mapping):
            if part not in node:
                raise Unsatisfiable(f"$ref target #{pointer} not found")
            node = node[part]
        else:
            raise Unsatisfiable(f"$ref target #{pointer} not found")
    return node


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _base_url(doc: Mapping[str, Any]) -> str:
    servers = doc.get("servers") or []
    url = "https://api.example.com"
    if servers and isinstance(servers[0], Mapping) and servers[0].get("url"):
        url = str(servers[0]["url"])
        for var, spec in (servers[0].get("variables") or {}).items():
            url = url.replace("{" + var + "}", str(spec.get("default", "")))
        if url.startswith("/"):
            url = "https://api.example.com" + url
    return url.rstrip("/")


def _openapi_operations(spec: RawSpec) -> Iterator[RawOperation]:
    doc = spec.doc
    schemes = (doc.get("components") or {}).get("securitySchemes") or {}
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        item_ptr = f"/paths/{_escape(path)}"
        item, item_ptr_r = spec.deref(item, item_ptr)
        shared = list(_params(spec, item.get("parameters") or [], f"{item_ptr_r}/parameters"))
        for method in HTTP_METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            op_ptr = f"{item_ptr_r}/{method}"
            own = list(_params(spec, op.get("parameters") or [], f"{op_ptr}/parameters"))
            names = {(p.name, p.location) for p in own}
            params = [p for p in shared if (p.name, p.location) not in names] + own
            bodies: list[tuple[str, str | None, Any]] = []
            body_required = False
            if op.get("requestBody") is not None:
                rb, rb_ptr = spec.deref(op["requestBody"], f"{op_ptr}/requestBody")
                body_required = _flag(rb.get("required", False))
                for media, entry in (rb.get("content") or {}).items():
                    if isinstance(entry, Mapping):
                        sch = entry.get("schema", {})
                        bodies.append((media, f"{rb_ptr}/content/{_escape(media)}/schema", sch))
            security = op.get("security", doc.get("security")) or []
            name = op.get("operationId") or f"{method.upper()} {path}"
            yield RawOperation(
                str(name),
                method.upper(),
                str(path),
                tuple(params),
                tuple(bodies),
                body_required,
                tuple(_auth(security, schemes)),
            )


def _flag(value: Any) -> bool:
    """A boolean keyword; Spotify's spec writes ``"required": "false"`` as a string."""
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def _params(spec: RawSpec, raw: list[Any], base: str) -> Iterator[RawParam]:
    for i, p in enumerate(raw):
        p, ptr = spec.deref(p, f"{base}/{i}")
        if not isinstance(p, Mapping) or "name" not in p or "in" not in p:
            continue
        content = None
        if "schema" in p:
            sch, sch_ptr = p["schema"], f"{ptr}/schema"
        elif isinstance(p.get("content"), Mapping) and p["content"]:
            content, entry = next(iter(p["content"].items()))
            sch, sch_ptr = entry.get("schema", {}), f"{ptr}/content/{_escape(content)}/schema"
        else:
            sch, sch_ptr = {}, None
        yield RawParam(
            str(p["name"]),
            str(p["in"]),
            sch,
            _flag(p.get("required", False)) or p["in"] == "path",
            sch_ptr,
            p.get("style"),
            p.get("explode"),
            content,
        )


def _auth(security: list[Any], schemes: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """What a client sends for the first security requirement (placeholder values)."""
    if not security or not isinstance(security[0], Mapping):
        return
    for scheme_name in security[0]:
        scheme = schemes.get(scheme_name)
        if not isinstance(scheme, Mapping):
            continue
        kind = scheme.get("type")
        if kind == "apiKey" and scheme.get("in") in ("query", "header", "cookie"):
            yield str(scheme["in"]), str(scheme.get("name", "api_key")), DEMO_KEY
        elif kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            yield "header", "Authorization", "Basic ZGVtbzpkZW1v"
        elif kind in ("http", "oauth2", "openIdConnect"):
            yield "header", "Authorization", "Bearer " + DEMO_KEY


# -- function docs ------------------------------------------------------------------

_API_BANK_TYPES: Mapping[str, Mapping[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "list": {"type": "array"},
    "list(str)": {"type": "array", "items": {"type": "string"}},
    "dict": {"type": "object"},
}


def api_bank_functions(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """API-Bank docs (``input_parameters`` with Python type names) as JSON-Schema function
    docs. API-Bank does not say which parameters are optional, so all are required."""
    out = []
    for doc in docs:
        props = {}
        for name, p in (doc.get("input_parameters") or {}).items():
            schema = dict(_API_BANK_TYPES.get(str(p.get("type")), {}))
            if p.get("description"):
                schema["description"] = p["description"]
            props[name] = schema
        out.append(
            {
                "name": doc["name"],
                "parameters": {"type": "object", "properties": props, "required": list(props)},
            }
        )
    return out


_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def bfcl_functions(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs with BFCL's type names (``dict``, ``float``, ``tuple``,
    ``any``) written as JSON Schema."""

    def convert(schema: Any) -> Any:
        if isinstance(schema, list):
            return [convert(s) for s in schema]
        if not isinstance(schema, Mapping):
            return schema
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                mapped = _BFCL_TYPES.get(value, value)
                if mapped is not None:
                    out["type"] = mapped
            elif key == "properties" and isinstance(value, Mapping):
                out[key] = {k: convert(v) for k, v in value.items()}
            elif key in ("items", "additionalProperties"):
                out[key] = convert(value)
            else:
                out[key] = value
        return out

    return [
        {"name": f["name"], "parameters": convert(f.get("parameters") or {"type": "object"})}
        for f in functions
    ]


# -- values -------------------------------------------------------------------------

_FORMATS: Mapping[str, str] = {
    "date": "2024-05-17",
    "date-time": "2024-05-17T10:30:00Z",
    "time": "10:30:00Z",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/resource",
    "url": "https://example.com/resource",
    "uri-reference": "https://example.com/resource",
    "iri": "https://example.com/resource",
    "hostname": "example.com",
    "ipv4": "192.0.2.10",
    "ipv6": "2001:db8::10",
    "byte": base64.b64encode(b"sample").decode(),
    "binary": "sample file content",
    "password": "s3cret-Passw0rd",
    "duration": "P1D",
    "int32": "42",
    "int64": "42",
}


class _Values:
    """Draws a value for a schema. ``optional``: chance to send an optional property."""

    def __init__(self, spec: RawSpec, rng: random.Random, optional: float) -> None:
        self.spec = spec
        self.rng = rng
        self.optional = optional

    def flatten(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        """One concrete schema: ``$ref`` followed, ``allOf`` merged, one ``oneOf`` /
        ``anyOf`` branch picked and merged in."""
        if depth > _MAX_DEPTH:
            raise Unsatisfiable("composition nested too deep")
        schema, _ = self.spec.deref(schema)
        if schema is True or schema is None:
            return {}
        if schema is False:
            raise Unsatisfiable("schema false")
        if not isinstance(schema, Mapping):
            return {}
        out = {k: v for k, v in schema.items() if k not in ("allOf", "oneOf", "anyOf")}
        for part in schema.get("allOf") or []:
            out = _merge(out, self.flatten(part, depth + 1))
        for key in ("oneOf", "anyOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                out = _merge(out, self._branch(schema, branches, depth))
        return out

    def _branch(self, schema: Mapping[str, Any], branches: list[Any], depth: int) -> Any:
        # Prefer branches that are not just null.
        usable = [b for b in branches if self.spec.deref(b)[0] not in ({"type": "null"},)]
        choice = self.rng.choice(usable or branches)
        flat = self.flatten(choice, depth + 1)
        disc = schema.get("discriminator")
        if isinstance(disc, Mapping) and isinstance(disc.get("propertyName"), str):
            prop = disc["propertyName"]
            ref = choice.get("$ref") if isinstance(choice, Mapping) else None
            tag = None
            for key, target in (disc.get("mapping") or {}).items():
                if target == ref:
                    tag = key
            if tag is None and isinstance(ref, str):
                tag = ref.rsplit("/", 1)[-1]
            props = dict(flat.get("properties") or {})
            current = self.flatten(props.get(prop, {}), depth + 1)
            if tag is not None and "enum" not in current and "const" not in current:
                props[prop] = {**current, "const": tag}
                flat = {**flat, "properties": props}
        return flat

    def value(self, schema: Any, depth: int = 0, name: str = "") -> Any:
        if depth > _MAX_DEPTH:
            raise Unsatisfiable("schema nested too deep")
        s = self.flatten(schema)
        t = s.get("type")
        nullable = s.get("nullable") is True or (isinstance(t, list) and "null" in t)
        if nullable and self.optional > 0 and self.rng.random() < self.optional / 3:
            return None  # null is a documented value here (3.0 nullable, 3.1 type arrays)
        if "const" in s:
            return s["const"]
        enum = s.get("enum")
        if isinstance(enum, list) and enum:
            options = [v for v in enum if v is not None] or enum
            return _plain(self.rng.choice(options))
        for key in ("example", "default"):
            usable = key in s and s[key] is not None and not isinstance(s[key], (Mapping, list))
            if usable and self.rng.random() < 0.5:
                return _plain(s[key])
        if isinstance(s.get("examples"), list) and s["examples"] and self.rng.random() < 0.5:
            first = s["examples"][0]
            if first is not None and not isinstance(first, (Mapping, list)):
                return _plain(first)
        kind = _type_of(s, self.rng)
        if kind == "null":
            return None
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind in ("integer", "number"):
            return _number(s, kind, self.rng)
        if kind == "array":
            return self._array(s, depth, name)
        if kind == "object":
            return self._object(s, depth)
        return _string(s, name, self.rng, varied=self.optional >= 0.9)

    def _array(self, s: Mapping[str, Any], depth: int, name: str) -> list[Any]:
        low = int(s.get("minItems", 0) or 0)
        high = s.get("maxItems")
        n = max(low, 1 if self.rng.random() < 0.8 else 0)
        if high is not None:
            n = min(n, int(high))
        items = s.get("items", {})
        out: list[Any] = []
        tries = 0
        while len(out) < n and tries < 10 * (n + 1):
            tries += 1
            v = self.value(items, depth + 1, name)
            if s.get("uniqueItems") and v in out:
                continue
            out.append(v)
        if len(out) < low:
            raise Unsatisfiable("no distinct array items")
        return out

    def _object(self, s: Mapping[str, Any], depth: int) -> dict[str, Any]:
        props = s.get("properties") or {}
        required = [r for r in s.get("required") or [] if isinstance(r, str)]
        out: dict[str, Any] = {}
        for name, sub in props.items():
            flat_sub = self.spec.deref(sub)[0]
            read_only = isinstance(flat_sub, Mapping) and flat_sub.get("readOnly")
            if self.spec.kind == "openapi" and read_only and name not in required:
                continue  # not sent in requests
            if name in required or (depth < _MAX_DEPTH - 3 and self.rng.random() < self.optional):
                out[name] = self.value(sub, depth + 1, name)
        for name in required:
            if name not in out:
                out[name] = "sample"
        extra = s.get("additionalProperties")
        if extra not in (None, False, "false") and self.optional > 0 and self.rng.random() < 0.3:
            # an open object takes names it does not list
            sub = extra if isinstance(extra, Mapping) else {"type": "string"}
            out.setdefault("extra_note", self.value(sub, depth + 1, "extra_note"))
        return out


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(out.get(key), Mapping):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(out.get(key), list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type" and key in out and out[key] != value:
            mine = out[key] if isinstance(out[key], list) else [out[key]]
            theirs = value if isinstance(value, list) else [value]
            both = [t for t in mine if t in theirs]
            out[key] = both[0] if len(both) == 1 else (both or theirs)
        elif key not in out:
            out[key] = value
    return out


def _type_of(s: Mapping[str, Any], rng: random.Random) -> str:
    t = s.get("type")
    if isinstance(t, list):
        options = [x for x in t if x != "null"] or t
        return str(options[0])
    if isinstance(t, str):
        return t
    if "properties" in s or "additionalProperties" in s or "required" in s:
        return "object"
    if "items" in s:
        return "array"
    if any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return "string"


def _number(s: Mapping[str, Any], kind: str, rng: random.Random) -> int | float:
    low = s.get("minimum")
    high = s.get("maximum")
    ex_low, ex_high = s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    # 3.0: booleans beside minimum/maximum; 3.1: numbers of their own
    if isinstance(ex_low, (int, float)) and not isinstance(ex_low, bool):
        low = ex_low + (1 if kind == "integer" else 0.5)
    elif ex_low is True and low is not None:
        low = low + (1 if kind == "integer" else 0.5)
    if isinstance(ex_high, (int, float)) and not isinstance(ex_high, bool):
        high = ex_high - (1 if kind == "integer" else 0.5)
    elif ex_high is True and high is not None:
        high = high - (1 if kind == "integer" else 0.5)
    lo = float(low) if low is not None else (float(high) - 10 if high is not None else 1.0)
    hi = float(high) if high is not None else lo + 99
    step = s.get("multipleOf")
    if kind == "integer":
        a, b = math.ceil(lo), math.floor(min(hi, lo + 1000))
        if a > b:
            raise Unsatisfiable("empty integer range")
        value: int | float = rng.randint(a, b)
        if isinstance(step, int) and step > 0:
            value = max(a, (int(value) // step) * step)
            if value < a:
                value += step
        return value
    value = round(rng.uniform(lo, min(hi, lo + 1000)), 2)
    if rng.random() < 0.3 and math.ceil(lo) <= math.floor(min(hi, lo + 1000)):
        value = math.ceil(lo)  # a whole number is a number too
    if isinstance(step, (int, float)) and step > 0:
        value = round(value / step) * step
    return value


_WORDS = ("sample", "alpha", "report", "demo", "north")
#: free text as users send it: spaces, non-ASCII letters, characters a URL must escape
_VARIED_WORDS = ("sample text", "café crème", "a&b=c/d?e", "50% off", "naïve #1")


def _string(s: Mapping[str, Any], name: str, rng: random.Random, varied: bool = False) -> str:
    fmt = s.get("format")
    if fmt == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    words = _VARIED_WORDS if varied and rng.random() < 0.5 else _WORDS
    text = _FORMATS[fmt] if isinstance(fmt, str) and fmt in _FORMATS else rng.choice(words)
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        for candidate in (text, "12345", "abc", "ABC", "a1b2c3", "2024-05-17", "1"):
            try:
                if re.search(pattern, candidate):
                    text = candidate
                    break
            except re.error:
                break
        else:
            raise Unsatisfiable(f"no value for pattern {pattern!r}")
    low = int(s.get("minLength", 0) or 0)
    high = s.get("maxLength")
    if len(text) < low:
        text = text + "x" * (low - len(text))
    if high is not None and len(text) > int(high):
        text = text[: int(high)]
    return text


# -- requests -----------------------------------------------------------------------


@dataclass
class SentRequest:
    """A request about to be sent, kept in parts so that mutations can edit it.

    ``values`` maps ``(location, name)`` to the typed value (path, query, header,
    cookie, body or argument), in the order they are sent."""

    operation: RawOperation
    base_url: str
    values: dict[tuple[str, str], Any]
    media: str | None = None  # the body's media type when a body is sent
    body_whole: Any = None  # a non-object body (a list, a string)
    path_override: str | None = None  # a mutated path (E2.2/E2.3)
    name_override: str | None = None  # a mutated function name
    #: send an ``application/x-www-form-urlencoded`` body as its text (``a=1&b=x``), as
    #: HTTP logs and HAR captures hold it, instead of as a mapping
    form_text: bool = False
    #: send an HTTP operation as a tool call (:meth:`call_record`)
    as_call: bool = False
    #: write headers the way many clients do: lower-case names, a charset on JSON
    loose_headers: bool = False

    def copy(self, **changes: Any) -> SentRequest:
        fields = {
            "operation": self.operation,
            "base_url": self.base_url,
            "values": dict(self.values),
            "media": self.media,
            "body_whole": self.body_whole,
            "path_override": self.path_override,
            "name_override": self.name_override,
            "form_text": self.form_text,
            "as_call": self.as_call,
            "loose_headers": self.loose_headers,
        }
        fields.update(changes)
        return SentRequest(**fields)

    def call_record(self) -> dict[str, Any]:
        """An HTTP operation called as a tool, the way an agent calls an OpenAPI spec:
        ``{"name": operationId, "arguments": {...}}`` with every documented path, query,
        header and top-level body value as one argument (credentials left out)."""
        documented = {(p.location, p.name) for p in self.operation.params}
        args = {
            n: v for (loc, n), v in self.values.items() if loc == "body" or (loc, n) in documented
        }
        return {"name": self.name_override or self.operation.name, "arguments": args}

    def record(self) -> dict[str, Any]:
        """The HTTP record (``{"method", "url", "headers", "body"}``) or the tool call
        (``{"name", "arguments"}``) that is sent to the scanner."""
        op = self.operation
        if op.method is None:
            args = {n: v for (loc, n), v in self.values.items() if loc == "argument"}
            return {"name": self.name_override or op.name, "arguments": args}
        assert op.path is not None
        if self.as_call:
            return self.call_record()
        template, _, fixed_query = (self.path_override or op.path).partition("?")
        template = template.partition("#")[0]  # Box's ``/files/{id}#get_shared_link``
        if not template.startswith("/"):
            template = "/" + template  # a client joins server and path with one slash
        params = {p.name: p for p in op.params}
        path = template
        query: list[tuple[str, str]] = [
            (k, v) for k, _, v in (x.partition("=") for x in fixed_query.split("&") if x)
        ]
        headers: dict[str, str] = {}
        cookies: list[str] = []
        body: dict[str, Any] = {}
        for (loc, name), value in self.values.items():
            p = params.get(name)
            if loc == "path":
                path = path.replace("{" + name + "}", quote(_wire(value, ","), safe=""))
            elif loc == "query":
                query.extend(_query_pairs(name, value, p))
            elif loc == "header":
                headers[name] = _wire(value, ",")
            elif loc == "cookie":
                cookies.append(f"{name}={_wire(value, ',')}")
            elif loc == "body":
                body[name] = value
        if cookies:
            headers["Cookie"] = "; ".join(cookies)
        out: dict[str, Any] = {"method": op.method, "url": self.base_url + path}
        if query:
            out["url"] += "?" + urlencode(query, safe=",[]")
        if self.media is not None:
            charset = "; charset=utf-8" if self.loose_headers and _is_json(self.media) else ""
            headers.setdefault("Content-Type", self.media + charset)
        if self.loose_headers:  # header names are case-insensitive (RFC 9110)
            headers = {k.lower(): v for k, v in headers.items()}
        out["headers"] = headers
        if self.media is not None:
            out["body"] = self.body_whole if self.body_whole is not None else body
            if self.form_text and self.media == _FORM_MEDIA[0] and isinstance(out["body"], dict):
                out["body"] = urlencode(_form_pairs(out["body"]))
        return out


def _wire(value: Any, sep: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return sep.join(_wire(v, sep) for v in value)
    if isinstance(value, Mapping):
        return sep.join(f"{k}{sep}{_wire(v, sep)}" for k, v in value.items())
    if value is None:
        return ""
    return str(value)


def _form_pairs(body: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """A form body as text pairs: lists repeat the key, objects nest as ``a[b]=c``."""
    pairs: list[tuple[str, str]] = []
    for key, value in body.items():
        name = f"{prefix}[{key}]" if prefix else str(key)
        if isinstance(value, Mapping):
            pairs += _form_pairs(value, name)
        elif isinstance(value, list):
            pairs += [(name, _wire(v, ",")) for v in value]
        else:
            pairs.append((name, _wire(value, ",")))
    return pairs


def _query_pairs(name: str, value: Any, p: RawParam | None) -> list[tuple[str, str]]:
    if p is not None and p.content is not None:
        return [(name, json.dumps(value))]
    style = (p.style if p else None) or "form"
    explode = (p.explode if p else None) if (p and p.explode is not None) else style == "form"
    if isinstance(value, list):
        if explode:
            return [(name, _wire(v, ",")) for v in value]
        sep = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(style, ",")
        return [(name, sep.join(_wire(v, ",") for v in value))]
    if isinstance(value, Mapping):
        if style == "deepObject":
            return [(f"{name}[{k}]", _wire(v, ",")) for k, v in value.items()]
        if explode:
            return [(str(k), _wire(v, ",")) for k, v in value.items()]
        return [(name, _wire(value, ","))]
    return [(name, _wire(value, ","))]


@dataclass
class Generated:
    """The outcome for one operation: a request the raw validator accepts (or ``None``),
    how many drafts it rejected, and why the last one failed."""

    request: SentRequest | None
    dropped: int
    reason: str = ""


def generate(
    spec: RawSpec,
    op: RawOperation,
    rng: random.Random,
    *,
    optional: float = 0.3,
    with_body: bool | None = None,
    attempts: int = 6,
) -> Generated:
    """A request for ``op`` that validates against the raw spec, after at most
    ``attempts`` drafts. ``with_body``: force the optional body in or out (``None``: a
    coin flip)."""
    dropped = 0
    reason = ""
    for _ in range(attempts):
        try:
            draft = _draft(spec, op, rng, optional, with_body)
        except Unsatisfiable as exc:
            dropped += 1
            reason = f"unsatisfiable: {exc}"
            continue
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            # a schema keyword of the wrong type (``"minimum": "abc"``): no value for it
            dropped += 1
            reason = f"unreadable schema: {type(exc).__name__}: {exc}"
            continue
        problems = validate(spec, draft)
        if not problems:
            return Generated(draft, dropped)
        dropped += 1
        reason = problems[0]
    return Generated(None, dropped, reason)


def _draft(
    spec: RawSpec, op: RawOperation, rng: random.Random, optional: float, with_body: bool | None
) -> SentRequest:
    values: dict[tuple[str, str], Any] = {}
    gen = _Values(spec, rng, optional)
    if op.method is None:
        for p in op.params:
            if p.required or rng.random() < optional:
                values[("argument", p.name)] = gen.value(p.schema, 0, p.name)
        return SentRequest(op, "", values)
    for loc, name, value in op.auth:
        if loc != "cookie":
            values[(loc, name)] = value
    for p in op.params:
        if p.location not in ("path", "query", "header", "cookie"):
            continue
        if p.location == "header" and p.name.lower() in _CLIENT_HEADERS:
            continue  # set by the client from the media type and the auth scheme
        if p.required or rng.random() < optional:
            v = gen.value(p.schema, 0, p.name)
            if _unwritable(v, p):
                # an empty list or object vanishes from a URL, and OpenAPI defines no text
                # form for objects inside lists or objects: leave optional ones out
                if p.required:
                    raise Unsatisfiable(f"{p.location} parameter {p.name!r} has no text form")
                continue
            values[(p.location, p.name)] = v
    media = None
    whole = None
    send_body = op.body_required if with_body is None else (with_body or op.body_required)
    if with_body is None and not op.body_required:
        send_body = rng.random() < 0.5
    if op.bodies and send_body:
        media, _, schema = _pick_media(op.bodies)
        if _is_json(media) or media in _FORM_MEDIA:
            body = gen.value(schema, 0, "body")
            if isinstance(body, Mapping):
                for k, v in body.items():
                    values[("body", str(k))] = v
            else:
                whole = body
        else:
            whole = "sample content"
    return SentRequest(op, spec.base_url, values, media, whole)


def _unwritable(value: Any, p: RawParam) -> bool:
    if p.content is not None:
        return False  # sent as JSON text
    if value in ([], {}, None) or _wire(value, ",") == "":
        return True
    items = value.values() if isinstance(value, Mapping) else value
    if isinstance(value, (list, Mapping)):
        return any(isinstance(v, (list, Mapping)) for v in items)
    return False


def _is_json(media: str) -> bool:
    return bool(_JSON_MEDIA.match(media))


def _pick_media(bodies: Sequence[tuple[str, str | None, Any]]) -> tuple[str, str | None, Any]:
    for want in ("json", *_FORM_MEDIA):
        for entry in bodies:
            if (want == "json" and _is_json(entry[0])) or entry[0] == want:
                return entry
    return bodies[0]


def validate(spec: RawSpec, request: SentRequest) -> list[str]:
    """Why the raw spec rejects ``request`` (empty when it accepts it)."""
    op = request.operation
    problems: list[str] = []
    if op.method is None:
        args = {n: v for (loc, n), v in request.values.items() if loc == "argument"}
        for message in spec.errors(None, op.arguments_schema, args):
            problems.append(f"arguments: {message}")
        return problems
    params = {(p.location, p.name): p for p in op.params}
    for p in op.params:
        client_set = p.location == "header" and p.name.lower() in _CLIENT_HEADERS
        if p.required and (p.location, p.name) not in request.values and not client_set:
            problems.append(f"missing required {p.location} parameter {p.name!r}")
    for key, value in request.values.items():
        found = params.get(key)
        if found is None:
            continue  # credentials from the security scheme, body fields
        for message in spec.errors(found.pointer, found.schema, value):
            problems.append(f"{found.location}.{found.name}: {message}")
    if op.body_required and request.media is None and op.bodies:
        problems.append("missing required request body")
    if request.media is not None:
        entry = next(b for b in op.bodies if b[0] == request.media)
        body = (
            request.body_whole
            if request.body_whole is not None
            else {n: v for (loc, n), v in request.values.items() if loc == "body"}
        )
        if _is_json(request.media) or request.media in _FORM_MEDIA:
            for message in spec.errors(entry[1], entry[2], body):
                problems.append(f"body: {message}")
    return problems


# -- what mutations need --------------------------------------------------------------


def _shallow(spec: RawSpec, schema: Any) -> dict[str, Any]:
    """``$ref`` followed and ``allOf`` merged, ``oneOf``/``anyOf`` left in place: the
    schema a value must satisfy whichever branch it took."""
    schema, _ = spec.deref(schema)
    if not isinstance(schema, Mapping):
        return {}
    out = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema.get("allOf") or []:
        out = _merge(out, _shallow(spec, part))
    return out


def body_fields(spec: RawSpec, schema: Any, depth: int = 0) -> dict[str, tuple[Any, bool]]:
    """Top-level body properties -> (schema, required), across ``allOf`` and every
    ``oneOf``/``anyOf`` branch (required only where no branch makes it optional)."""
    if depth > _MAX_DEPTH:
        return {}
    flat = _shallow(spec, schema)
    required = set(flat.get("required") or ())
    out = {str(k): (v, k in required) for k, v in (flat.get("properties") or {}).items()}
    for key in ("oneOf", "anyOf"):
        branches = [body_fields(spec, b, depth + 1) for b in flat.get(key) or []]
        for branch in branches:
            for name, (sub, _req) in branch.items():
                everywhere = all(name in b and b[name][1] for b in branches)
                if name not in out:
                    out[name] = (sub, everywhere)
    return out


def slots(spec: RawSpec, request: SentRequest) -> list[Any]:
    """The documented parameters of ``request``'s operation, and the top-level fields
    of the body it sends, as :class:`benchmarks._mutations.Slot`."""
    from benchmarks._mutations import Slot

    op = request.operation
    out = []
    for p in op.params:
        try:
            schema = _shallow(spec, p.schema)
        except Unsatisfiable:
            schema = {}
        out.append(Slot(p.location, p.name, schema, p.required))
    if request.media is not None and request.body_whole is None:
        entry = next(b for b in op.bodies if b[0] == request.media)
        try:
            fields = body_fields(spec, entry[2])
        except Unsatisfiable:
            fields = {}
        try:
            extra = _shallow(spec, entry[2]).get("additionalProperties")
        except Unsatisfiable:
            extra = None
        closed = extra is None or extra is False or extra == "false"
        for name, (sub, req) in fields.items():
            try:
                schema = _shallow(spec, sub)
            except Unsatisfiable:
                schema = {}
            out.append(Slot("body", name, schema, req, closed))
    return out


def parameter_names(spec: RawSpec) -> dict[str, set[str]]:
    """Operation name -> every parameter and top-level body field name it takes."""
    out: dict[str, set[str]] = {}
    for op in spec.operations:
        names = {p.name for p in op.params if p.location in ("query", "argument")}
        for _, _, schema in op.bodies:
            with contextlib.suppress(Unsatisfiable):
                names |= set(body_fields(spec, schema))
        out[op.name] = names
    return out
