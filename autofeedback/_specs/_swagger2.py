"""Swagger 2.0 documents: the OpenAPI 3 loader with Swagger's own places for servers
(``host``/``basePath``/``schemes``), security (``securityDefinitions``), inline parameter
schemas with ``collectionFormat``, ``in: body`` and ``in: formData`` bodies, and
response ``schema``/``examples``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autofeedback._specs._common import server_url, text
from autofeedback._specs._openapi3 import (
    Body,
    OpenApi3Loader,
    ParamEntry,
    body_parameters,
    flag,
    pick_media,
)
from autofeedback.core._model import Parameter

__all__ = ["SwaggerLoader"]

# collectionFormat -> OpenAPI 3 (style, explode)
_COLLECTION_FORMATS: Mapping[str, tuple[str, bool]] = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "tsv": ("tabDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}

# Non-body parameters carry their schema inline.
_SCHEMA_KEYS = (
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


class SwaggerLoader(OpenApi3Loader):
    """Reads the operations of one Swagger 2.0 document."""

    locations = ("path", "query", "header", "cookie", "body", "formData")
    path_item_fields = frozenset(
        {"$ref", "parameters", "get", "put", "post", "delete", "options", "head", "patch"}
    )
    operation_fields = frozenset(
        {
            "tags",
            "summary",
            "description",
            "externalDocs",
            "operationId",
            "consumes",
            "produces",
            "parameters",
            "responses",
            "schemes",
            "deprecated",
            "security",
        }
    )
    parameter_fields = frozenset(
        {
            "name",
            "in",
            "description",
            "required",
            "schema",
            "allowEmptyValue",
            "collectionFormat",
            *_SCHEMA_KEYS,
        }
    )
    response_fields = frozenset({"description", "schema", "headers", "examples"})
    security_where = "securityDefinitions"

    def check_version(self) -> None:
        if not str(self.doc["swagger"]).startswith("2"):
            raise self.error(
                f"unsupported Swagger version {self.doc['swagger']!r} (expected 2.0)", "swagger"
            )

    def servers(self) -> list[str]:
        host = self.doc.get("host")
        base = self.doc.get("basePath") or ""
        base = base if isinstance(base, str) else ""
        if isinstance(host, str) and host:
            schemes = self.doc.get("schemes")
            schemes = schemes if isinstance(schemes, list) else []
            schemes = [s for s in schemes if isinstance(s, str)] or ["https"]
            return [
                server_url(f"{s}://{host}{base}".rstrip("/"), self.source, "host") for s in schemes
            ]
        return [base] if base.strip("/") else []

    def raw_security_schemes(self) -> Any:
        return self.doc.get("securityDefinitions")

    def parameter(self, p: dict[str, Any], where: str, doc_file: str) -> Parameter:
        raw = {k: p[k] for k in _SCHEMA_KEYS if k in p}
        style, explode = _style(p, p["in"])
        return Parameter(
            name=p["name"],
            location=p["in"],
            schema=self.resolver.schema(raw, where, doc_file=doc_file),
            required=p["in"] == "path" or flag(p.get("required")),
            description=text(p.get("description")),
            style=style,
            explode=explode,
        )

    def body(
        self,
        op: Mapping[str, Any],
        params: Mapping[tuple[str, str], ParamEntry],
        where: str,
        doc_file: str,
    ) -> Body:
        """``in: body`` (one JSON schema) or ``in: formData`` fields (a form body)."""
        consumes = op.get("consumes", self.doc.get("consumes"))
        media_types = (
            [c for c in consumes if isinstance(c, str)] if isinstance(consumes, list) else []
        )
        for p, p_where, p_file in params.values():
            if p["in"] == "body":
                schema = self.resolver.schema(
                    p.get("schema") or {}, f"{p_where}.schema", doc_file=p_file
                )
                media = (
                    pick_media(dict.fromkeys(media_types)) if media_types else "application/json"
                )
                return schema, body_parameters(schema), flag(p.get("required")), media
        fields = [e for e in params.values() if e[0]["in"] == "formData"]
        if not fields:
            return None, [], False, None
        properties: dict[str, Any] = {}
        required: list[str] = []
        out: list[Parameter] = []
        for p, p_where, p_file in fields:
            param = self.parameter({**p, "in": "query"}, p_where, p_file)
            param = Parameter(
                param.name,
                "body",
                param.schema,
                required=flag(p.get("required")),
                description=param.description,
                style=param.style,
                explode=param.explode,
            )
            properties[param.name] = param.schema
            if param.required:
                required.append(param.name)
            out.append(param)
        form_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            form_schema["required"] = required
        form = [m for m in media_types if m.lower().startswith(("multipart/", "application/x-www"))]
        return (
            form_schema,
            out,
            bool(required),
            form[0] if form else "application/x-www-form-urlencoded",
        )

    def response_content(
        self, resp: Mapping[str, Any], where: str, doc_file: str
    ) -> tuple[dict[str, Any] | None, Any]:
        schema = None
        if resp.get("schema") is not None:
            schema = self.resolver.schema(resp["schema"], f"{where}.schema", doc_file=doc_file)
        example = None
        examples = resp.get("examples")
        if isinstance(examples, dict) and examples:
            example = examples[pick_media(examples)]
        return schema, example


def _style(p: Mapping[str, Any], loc: str) -> tuple[str, bool]:
    fmt = p.get("collectionFormat", "csv")
    style, explode = _COLLECTION_FORMATS.get(str(fmt), ("form", False))
    if loc in ("path", "header") and style == "form":
        style = "simple"
    if p.get("type") != "array":
        explode = style == "form"  # OpenAPI 3's default; moot for scalars
    return style, explode
