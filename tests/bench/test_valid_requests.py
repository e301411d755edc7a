"""benchmarks/_valid_requests.py keeps the real-spec benchmark honest: the requests it
calls valid do satisfy the raw spec, checked here by validators the generator does not
share (a fresh OpenAPI schema validator per value; openapi-core's request validator), and
the mutations it counts as errors are rejected."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from openapi_schema_validator import OAS30WriteValidator, oas30_format_checker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from autofeedback.parsing import request_from_call, request_from_http

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:  # benchmarks/ is a folder of scripts, not an installed package
    sys.path.insert(0, str(_REPO))

from benchmarks._mutations import (  # noqa: E402
    SENT_MUTATORS,
    Slot,
    literal_variant,
    path_variant,
    sent_e3_4,
    sent_e4_1,
    synonym_variant,
)
from benchmarks._valid_requests import (  # noqa: E402
    RawSpec,
    SentRequest,
    api_bank_functions,
    generate,
    slots,
    validate,
)


def _resolve(doc: Any, pointer: str) -> Any:
    node = doc
    for part in pointer.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


@pytest.fixture(scope="module")
def box(shared_data_dir: Path) -> RawSpec:
    return RawSpec.from_file(shared_data_dir / "specs" / "box.json")


def _box_requests(box: RawSpec) -> list[SentRequest]:
    out = []
    for i, op in enumerate(box.operations):
        for variant in (0, 1):
            g = generate(
                box,
                op,
                random.Random(f"{op.name}/{variant}"),
                optional=0.5 * variant,
                with_body=None if variant == 0 else True,
            )
            if g.request is not None:
                out.append(g.request)
        if i >= 120:
            break
    return out


def test_box_requests_validate_against_the_raw_schemas(box: RawSpec) -> None:
    """Every value of every generated Box request, checked again with a validator built
    here over the raw document: parameters, the body, and the required ones present."""
    registry = Registry().with_resource(
        "urn:box", Resource.from_contents(box.doc, default_specification=DRAFT4)
    )

    def errors(pointer: str | None, value: Any) -> list[str]:
        assert pointer is not None
        schema = {"$ref": "urn:box#" + pointer.replace("{", "%7B").replace("}", "%7D")}
        validator = OAS30WriteValidator(
            schema, registry=registry, format_checker=oas30_format_checker
        )
        return [e.message for e in validator.iter_errors(value)]

    requests = _box_requests(box)
    assert len(requests) > 200
    with_body = 0
    for req in requests:
        op = req.operation
        for p in op.params:
            key = (p.location, p.name)
            if p.required and p.name.lower() not in ("authorization", "content-type"):
                assert key in req.values, (op.name, key)
            if key in req.values:
                assert not errors(p.pointer, req.values[key]), (op.name, key, req.values[key])
        if op.body_required:
            assert req.media is not None, op.name
        if req.media is not None:
            with_body += 1
            pointer = next(b[1] for b in op.bodies if b[0] == req.media)
            body = req.body_whole
            if body is None:
                body = {n: v for (loc, n), v in req.values.items() if loc == "body"}
            if isinstance(body, dict):
                assert not errors(pointer, body), (op.name, body)
        # the record is what autofeedback's HTTP reader takes, and it is JSON
        record = json.loads(json.dumps(req.record()))
        parsed = request_from_http(record)
        assert parsed.method == op.method
        assert "#" not in (parsed.url or "")  # Box's path-key fragments are never sent
    assert with_body > 50


def test_openai_requests_validate_as_json_schema_2020_12(shared_data_dir: Path) -> None:
    """OpenAPI 3.1 (OpenAI, discriminators without mappings, 3.1 type arrays): every
    generated value also passes plain ``Draft202012Validator`` over the raw document
    (3.1 schemas are 2020-12; the discriminator is an annotation there)."""
    from jsonschema import Draft202012Validator
    from referencing.jsonschema import DRAFT202012

    spec = RawSpec.from_file(shared_data_dir / "specs" / "openai.yaml")
    registry = Registry().with_resource(
        "urn:openai", Resource.from_contents(spec.registry().contents("urn:spec"), DRAFT202012)
    )

    def errors(pointer: str | None, value: Any) -> list[str]:
        assert pointer is not None
        ref = "urn:openai#" + pointer.replace("{", "%7B").replace("}", "%7D").replace("?", "%3F")
        validator = Draft202012Validator(
            {"$ref": ref}, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
        return [e.message for e in validator.iter_errors(value)]

    bodies = 0
    for op in spec.operations[::3]:
        g = generate(spec, op, random.Random(op.name), optional=0.9, with_body=True)
        if g.request is None:
            continue
        req = g.request
        for p in op.params:
            if (p.location, p.name) in req.values:
                assert not errors(p.pointer, req.values[(p.location, p.name)]), (op.name, p.name)
        if req.media is not None and req.body_whole is None and "json" in req.media:
            pointer = next(b[1] for b in op.bodies if b[0] == req.media)
            body = {n: v for (loc, n), v in req.values.items() if loc == "body"}
            assert not errors(pointer, body), (op.name, body)
            bodies += 1
    assert bodies > 20


def test_mutated_values_are_rejected_by_the_raw_validator(box: RawSpec) -> None:
    """The validator is not vacuous: a wrong type or a missing required field fails."""
    tried = 0
    for req in _box_requests(box)[:150]:
        for mutate in (sent_e4_1, sent_e3_4):
            values = mutate(req.values, slots(box, req), [], random.Random(0))
            if values is None:
                continue
            tried += 1
            assert validate(box, req.copy(values=values)), (req.operation.name, mutate, values)
    assert tried > 40


def test_tmdb_requests_pass_openapi_core(shared_data_dir: Path) -> None:
    """A second, independent validator: openapi-core accepts every generated TMDB request
    (its own spec check off, as TMDB's spec fails it)."""
    import requests
    from openapi_core import Config, OpenAPI
    from openapi_core.contrib.requests import RequestsOpenAPIRequest

    path = shared_data_dir / "restbench" / "tmdb_oas.json"
    spec = RawSpec.from_file(path)
    openapi = OpenAPI.from_file_path(str(path), config=Config(spec_validator_cls=None))  # type: ignore[arg-type]
    checked = 0
    for op in spec.operations:
        g = generate(spec, op, random.Random(op.name), optional=0.5)
        assert g.request is not None, (op.name, g.reason)
        record = g.request.record()
        prepared = requests.Request(record["method"], record["url"]).prepare()
        openapi.validate_request(RequestsOpenAPIRequest(prepared))
        query = dict(parse_qsl(urlsplit(record["url"]).query))
        assert query.get("api_key") == "demo-key"  # the spec's apiKey scheme, a placeholder
        checked += 1
    assert checked == len(spec.operations)


def test_function_docs_become_tool_calls(shared_data_dir: Path) -> None:
    from benchmarks._datasets import api_bank_doc_set

    spec = RawSpec.from_functions(api_bank_functions(api_bank_doc_set()), "api-bank")
    assert len(spec.operations) == 49
    for op in spec.operations:
        g = generate(spec, op, random.Random(op.name))
        assert g.request is not None
        call = request_from_call(g.request.record())
        assert call.name == op.name
        assert set(call.arguments) == {p.name for p in op.params}  # all are required


def test_path_variants_never_land_on_another_endpoint() -> None:
    taken = {"/files/{file_id}", "/files/content", "/search/movie"}
    # "/Files/content" is unknown; "/files/Content" would be /files/{file_id}
    assert path_variant("/files/content", taken, literal_variant) == "/Files/content"
    assert path_variant("/search/movie", taken, synonym_variant) == "/search/film"
    assert (
        path_variant("/files/{file_id}", {"/files/{file_id}", "/{x}/{y}"}, literal_variant) is None
    )


def test_sent_mutators_leave_credentials_and_open_bodies_alone() -> None:
    sent = {("query", "api_key"): "demo-key", ("body", "extra"): 1, ("query", "page"): 2}
    documented = [
        Slot("query", "page", {"type": "integer", "maximum": 500}, True),
        Slot("body", "extra", {"type": "integer"}, False, closed=False),
    ]
    rng = random.Random(0)
    renamed = SENT_MUTATORS["E3.2"](sent, documented, [], rng)
    assert renamed is not None and ("query", "Page") in renamed and ("query", "api_key") in renamed
    assert SENT_MUTATORS["E3.1"](sent, documented, ["language"], rng) == {
        ("query", "api_key"): "demo-key",
        ("body", "extra"): 1,
        ("query", "language"): 2,
    }
    assert SENT_MUTATORS["E4.2"](sent, documented, [], rng) == {**sent, ("query", "page"): 1500}
    assert SENT_MUTATORS["E4.1"](sent, documented, [], rng) == {**sent, ("body", "extra"): "twelve"}
    assert SENT_MUTATORS["E3.4"](sent, documented, [], rng) == {
        ("query", "api_key"): "demo-key",
        ("body", "extra"): 1,
    }


def test_a_synonym_that_another_operation_takes() -> None:
    from benchmarks._mutations import sent_e3_3_taken, synonym_variants

    assert synonym_variants("book_name") == ["book_title"]
    sent = {("body", "name"): "x", ("query", "page"): 1}
    slot = [Slot("body", "name", {"type": "string"}, True)]
    assert sent_e3_3_taken(sent, slot, ["title"], random.Random(0)) == {
        ("body", "title"): "x",
        ("query", "page"): 1,
    }
    assert sent_e3_3_taken(sent, slot, ["heading"], random.Random(0)) is None
