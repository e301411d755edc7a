"""The official JSON-Schema-Test-Suite, run the way a user's schemas are run.

Each suite schema enters through one of the places a schema enters autofeedback (a
*dialect* here): as the type of the one argument ``value`` of a function tool or an MCP
tool (2020-12, or the draft its ``$schema`` names), or of the one property ``value`` of
a JSON request body in OpenAPI 3.0, OpenAPI 3.1 or Swagger 2. The suite's local
``$ref``s are rebased onto that place, so the suite's schema is the root they mean.
Every test's ``data`` is then sent as that value through ``Scanner(..., retriever=None)``:
valid data must draw no error finding, invalid data at least one.

Used by ``tests/checks/test_json_schema_suite.py`` (one test per suite test) and by
``benchmarks/conformance.py`` (the agreement table in RESULTS.md).
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from autofeedback import ApiCatalog, RemoteRefs, Scanner
from autofeedback.core._exceptions import SpecError

__all__ = [
    "DIALECTS",
    "REMOTES_BASE",
    "Case",
    "Dialect",
    "FileRun",
    "deviation",
    "matches_file",
    "run_file",
    "serve_remotes",
    "suite_files",
]

_JSON = "application~1json"  # the media type as a JSON-pointer token
_DRAFT_URI = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft4": "http://json-schema.org/draft-04/schema#",
}

# what an OpenAPI 3.0 Schema Object / a Swagger 2 Schema Object may hold (the draft-4
# keywords each kept); a suite group using anything else is not this dialect's to judge
_OAS30_KEYWORDS = frozenset(
    {
        "title",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "required",
        "enum",
        "type",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "items",
        "properties",
        "additionalProperties",
        "description",
        "format",
        "default",
        "$ref",
    }
)
_SWAGGER2_KEYWORDS = _OAS30_KEYWORDS - {"oneOf", "anyOf", "not"}

# suite files whose every group needs what no wrapper gives: a meta-schema of its own
# (a vocabulary, another draft's rules, a format assertion vocabulary)
_NEEDS_OWN_ROOT = frozenset(
    {
        "vocabulary.json",
        "cross-draft.json",
        "format-assertion.json",
    }
)
_ROOT_KEYWORDS = frozenset({"$recursiveRef", "$recursiveAnchor", "$schema"})

#: where the suite's remote references point (its ``remotes/`` folder, served)
REMOTES_BASE = "http://localhost:1234/"
#: the project's copy of the suite's ``remotes/``, at the commit of the shared ``tests/``
#: (see its README.md)
REMOTES = Path(__file__).resolve().parents[1] / "tests" / "data" / "json-schema-test-suite-remotes"


@dataclass(frozen=True)
class Dialect:
    """One place a schema enters: the suite draft it is judged by, how a schema is
    wrapped into a spec, and how a value is sent."""

    name: str
    draft: str
    keywords: frozenset[str] | None  # the keywords this place allows; None: all

    def spec(self, schemas: list[Any]) -> Any:
        """One spec with an operation ``g<i>`` per suite schema."""
        if self.name.startswith(("tools", "mcp")):
            return [self._tool(i, s) for i, s in enumerate(schemas)]
        paths: dict[str, Any] = {}
        for i, schema in enumerate(schemas):
            if self.name == "swagger-2":
                at = f"/paths/~1g{i}/post/parameters/0/schema/properties/value"
                op = {
                    "operationId": f"g{i}",
                    "consumes": ["application/json"],
                    "parameters": [
                        {
                            "in": "body",
                            "name": "body",
                            "required": True,
                            "schema": _body(schema, at, self.draft),
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            else:
                at = f"/paths/~1g{i}/post/requestBody/content/{_JSON}/schema/properties/value"
                op = {
                    "operationId": f"g{i}",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _body(schema, at, self.draft)}},
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            paths[f"/g{i}"] = {"post": op}
        if self.name == "swagger-2":
            return {
                "swagger": "2.0",
                "info": {"title": "suite", "version": "1"},
                "host": "api.example.com",
                "schemes": ["https"],
                "paths": paths,
            }
        return {
            "openapi": "3.0.3" if self.name == "openapi-3.0" else "3.1.0",
            "info": {"title": "suite", "version": "1"},
            "servers": [{"url": "https://api.example.com"}],
            "paths": paths,
        }

    def _tool(self, i: int, schema: Any) -> Any:
        root = {
            "type": "object",
            "properties": {"value": _rebase(schema, "/properties/value", self.draft)},
            "required": ["value"],
        }
        if self.draft != "draft2020-12":
            root["$schema"] = _DRAFT_URI[self.draft]
        if self.name.startswith("mcp"):
            return {"name": f"g{i}", "description": "suite group", "inputSchema": root}
        return {"type": "function", "function": {"name": f"g{i}", "parameters": root}}

    def call(self, i: int, data: Any) -> Any:
        if self.name.startswith(("tools", "mcp")):
            return {"name": f"g{i}", "arguments": {"value": data}}
        return {"method": "POST", "url": f"https://api.example.com/g{i}", "json": {"value": data}}


def _body(schema: Any, at: str, draft: str) -> Any:
    return {
        "type": "object",
        "properties": {"value": _rebase(schema, at, draft)},
        "required": ["value"],
    }


def _rebase(schema: Any, at: str, draft: str) -> Any:
    """``schema`` with its local ``$ref``s (JSON pointers) pointing where it now sits
    (``at``). Inside a schema with its own ``$id`` they are relative to that, and an
    anchor (``#foo``) is found wherever it sits: those stay as they are."""
    if isinstance(schema, list):
        return [_rebase(s, at, draft) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ident = schema.get("id" if draft == "draft4" else "$id")
    if isinstance(ident, str) and not ident.startswith("#"):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if (
            key in ("$ref", "$dynamicRef")
            and isinstance(value, str)
            and (value == "#" or value.startswith("#/"))
        ):
            out[key] = "#" + at + value[1:]
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value
        else:
            out[key] = _rebase(value, at, draft)
    return out


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("tools-2020-12", "draft2020-12", None),
        Dialect("mcp-2020-12", "draft2020-12", None),
        Dialect("tools-draft7", "draft7", None),
        Dialect("tools-draft4", "draft4", None),
        Dialect("openapi-3.0", "draft4", _OAS30_KEYWORDS),
        Dialect("openapi-3.1", "draft2020-12", None),
        Dialect("swagger-2", "draft4", _SWAGGER2_KEYWORDS),
    )
}


@dataclass(frozen=True)
class Case:
    """One suite test as judged in one dialect."""

    dialect: str
    file: str  # relative to the draft folder: "oneOf.json", "optional/format/email.json"
    group: str
    test: str
    data: Any
    valid: bool
    outcome: str  # "agree", "false error", "missed", "skipped"
    detail: str = ""  # the finding that refused valid data, or why it was skipped

    @property
    def kind(self) -> str:
        if self.file.startswith("optional/format/"):
            return "format"
        return "optional" if self.file.startswith("optional/") else "required"

    @property
    def id(self) -> str:
        return f"{self.dialect}/{self.file}::{self.group}::{self.test}"


@dataclass(frozen=True)
class FileRun:
    dialect: str
    file: str
    cases: tuple[Case, ...]


def suite_files(root: Path, draft: str) -> list[str]:
    """The suite's test files of one draft, relative to its folder, sorted."""
    base = root / "tests" / draft
    return sorted(str(p.relative_to(base)) for p in base.rglob("*.json"))


def _keywords(schema: Any, out: set[str]) -> None:
    if isinstance(schema, list):
        for s in schema:
            _keywords(s, out)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            out.add(key)
            if key in ("properties", "patternProperties", "definitions", "$defs"):
                if isinstance(value, dict):
                    for s in value.values():
                        _keywords(s, out)
            elif key not in ("enum", "const", "default", "examples", "required"):
                _keywords(value, out)


def _skip_reason(dialect: Dialect, file: str, schema: Any) -> str:
    name = file.rsplit("/", 1)[-1]
    if name in _NEEDS_OWN_ROOT:
        return "needs a meta-schema of its own (a vocabulary, another draft's rules)"
    keywords: set[str] = set()
    _keywords(schema, keywords)
    needs_root = (keywords & _ROOT_KEYWORDS) - {"$schema"}
    if needs_root:
        return f"needs draft 2019-09's recursive references ({', '.join(sorted(needs_root))})"
    if (
        isinstance(schema, dict)
        and "$schema" in schema
        and schema["$schema"] != _DRAFT_URI.get(dialect.draft)
    ):
        return "names another draft's meta-schema"
    if dialect.keywords is not None:
        if not isinstance(schema, dict):
            return f"{dialect.name} schemas are objects, not booleans"
        outside = {k for k in keywords - dialect.keywords if not k.startswith("x-")}
        if outside:
            return f"not a {dialect.name} Schema Object keyword: {', '.join(sorted(outside))}"
        if _has_tuple_items(schema):
            return f"{dialect.name} 'items' is one schema, not a list"
        if _has_type_list(schema):
            return f"{dialect.name} 'type' is one name, not a list"
    return ""


def _has_tuple_items(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_has_tuple_items(s) for s in schema)
    if isinstance(schema, dict):
        if isinstance(schema.get("items"), list):
            return True
        return any(_has_tuple_items(v) for k, v in schema.items() if k not in ("enum", "default"))
    return False


def _has_type_list(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_has_type_list(s) for s in schema)
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            return True
        return any(_has_type_list(v) for k, v in schema.items() if k not in ("enum", "default"))
    return False


def _strip_schema_uri(schema: Any) -> Any:
    # the wrapper names the draft at the tool's root; a nested $schema means nothing
    if isinstance(schema, dict) and "$schema" in schema:
        return {k: v for k, v in schema.items() if k != "$schema"}
    return schema


def _load(
    dialect: Dialect, schemas: list[Any], remote_refs: RemoteRefs | None
) -> tuple[Scanner | None, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            catalog = ApiCatalog.from_obj(
                dialect.spec(schemas), source="<suite>", remote_refs=remote_refs
            )
    except SpecError as exc:
        return None, f"spec error: {exc.reason}"
    return Scanner(catalog, retriever=None), ""


def _errors(scanner: Scanner, call: Any) -> list[str]:
    return [f"{f.code} {f.message}" for f in scanner.iter_findings(call) if f.severity == "error"]


def _mentions_remotes(schema: Any) -> bool:
    """Whether ``schema`` names the suite's remote address anywhere (a ``$ref``, or a
    ``$id`` that relative references resolve against)."""
    if isinstance(schema, str):
        return schema.startswith(REMOTES_BASE)
    if isinstance(schema, list):
        return any(_mentions_remotes(s) for s in schema)
    if isinstance(schema, dict):
        return any(_mentions_remotes(v) for v in schema.values())
    return False


def run_file(
    root: Path, dialect: Dialect, file: str, remote_refs: RemoteRefs | None = None
) -> FileRun:
    """Judge every test of one suite file in one dialect (one catalog for the file).
    ``remote_refs``: where the suite's ``remotes/`` are served (see :data:`REMOTES_BASE`);
    without it a remote reference is not read, and its schema not checked."""
    groups = json.loads((root / "tests" / dialect.draft / file).read_text(encoding="utf-8"))
    judged: list[tuple[int, Mapping[str, Any]]] = []
    skipped: dict[int, str] = {}
    schemas: list[Any] = []
    for g, group in enumerate(groups):
        reason = _skip_reason(dialect, file, group["schema"])
        if not reason and remote_refs is None and _mentions_remotes(group["schema"]):
            reason = "refers to the suite's remotes/, which are not here to serve"
        if reason:
            skipped[g] = reason
        else:
            skipped.pop(g, None)
            judged.append((g, group))
        schemas.append(_strip_schema_uri(group["schema"]) if not reason else {})
    scanner, problem = _load(dialect, schemas, remote_refs)
    per_group: dict[int, tuple[Scanner | None, str]] = {}
    if scanner is None:
        # one bad group must not hide the others: load each alone
        for g, _ in judged:
            alone = [s if i == g else {} for i, s in enumerate(schemas)]
            per_group[g] = _load(dialect, alone, remote_refs)
    cases: list[Case] = []
    for g, group in enumerate(groups):
        for test in group["tests"]:
            base = dict(
                dialect=dialect.name,
                file=file,
                group=group["description"],
                test=test["description"],
                data=test["data"],
                valid=bool(test["valid"]),
            )
            if g in skipped:
                cases.append(Case(**base, outcome="skipped", detail=skipped[g]))  # type: ignore[arg-type]
                continue
            judge, problem = per_group.get(g, (scanner, problem))
            if judge is None:
                outcome = "false error" if test["valid"] else "agree"
                cases.append(Case(**base, outcome=outcome, detail=problem))  # type: ignore[arg-type]
                continue
            errors = _errors(judge, dialect.call(g, test["data"]))
            if test["valid"]:
                outcome = "false error" if errors else "agree"
            else:
                outcome = "agree" if errors else "missed"
            cases.append(Case(**base, outcome=outcome, detail="; ".join(errors[:2])))  # type: ignore[arg-type]
    return FileRun(dialect.name, file, tuple(cases))


# -- deliberate deviations ---------------------------------------------------------------

#: (file name, words in the group's description or None, the outcome) -> why it stays
_DEVIATIONS: list[tuple[str, str | None, str, str]] = [
    (
        "oneOf.json",
        None,
        "missed",
        "oneOf is judged as anyOf: real specs' branches overlap, and a value fitting two "
        "branches is not the model's mistake",
    ),
    (
        "unevaluatedProperties.json",
        "ref inside allOf / oneOf",
        "missed",
        "oneOf is judged as anyOf (see oneOf.json), so every branch's properties count as "
        "evaluated",
    ),
    (
        "unevaluatedProperties.json",
        "dynamic evalation inside nested refs",
        "missed",
        "oneOf is judged as anyOf (see oneOf.json), so every branch's properties count as "
        "evaluated",
    ),
    (
        "unevaluatedProperties.json",
        "single cyclic ref",
        "missed",
        "a recursive $ref is expanded once; below that it is unconstrained (a loader that "
        "inlines references must stop somewhere, and an unknown schema accepts)",
    ),
    (
        "zeroTerminatedFloats.json",
        None,
        "missed",
        "1.0 is an integer in every dialect (2020-12's rule): JSON does not tell 1.0 from 1, "
        "and neither do the clients that send it",
    ),
    (
        "optional/content.json",
        None,
        "missed",
        "contentMediaType/contentEncoding are annotations, as from draft 2019-09 on",
    ),
    (
        "format/duration.json",
        None,
        "missed",
        "duration is checked by isoduration (jsonschema's checker), which reads ISO 8601 "
        "and so takes forms RFC 3339's ABNF refuses (PT0.5S, -P1D, P1WT1H)",
    ),
    (
        "format/email.json",
        None,
        "missed",
        "email is checked as jsonschema checks it: an '@' in the value",
    ),
    (
        "format/hostname.json",
        None,
        "missed",
        "hostname is checked by fqdn (jsonschema's checker), which neither decodes A-labels "
        "(xn--) nor refuses a trailing dot",
    ),
    (
        "format/idn-hostname.json",
        None,
        "missed",
        "idn-hostname is checked by idna (jsonschema's checker), which takes a trailing dot "
        "and a digit-first bidi label",
    ),
    (
        "format/uri.json",
        None,
        "missed",
        "rfc3987 (jsonschema's checker) takes a leading zero in an IPv4 inside an IPv6 literal",
    ),
    (
        "format/uri-reference.json",
        None,
        "missed",
        "rfc3987 (jsonschema's checker) takes a leading zero in an IPv4 inside an IPv6 literal",
    ),
    (
        "format/ecmascript-regex.json",
        "\\a is not an ECMA 262 control escape",
        "missed",
        "an escaped letter with no meaning (\\a) is read as the letter, as outside Unicode "
        "mode, so that specs written for other engines keep their patterns",
    ),
    (
        "format/iri.json",
        None,
        "missed",
        "iri is not asserted: its checker (rfc3987) refuses a valid IRI (http://[V1.fe])",
    ),
    (
        "format/relative-json-pointer.json",
        None,
        "missed",
        "relative-json-pointer is not asserted: jsonschema's checker refuses a valid one (100)",
    ),
    (
        "format/uri-template.json",
        None,
        "missed",
        "uri-template is not asserted: its checker (uri-template) refuses valid ones ({%41})",
    ),
    (
        "format.json",
        None,
        "false error",
        "formats are asserted (an API request with a malformed date is wrong), where the "
        "draft makes them annotations",
    ),
]


def matches_file(case_file: str, file: str) -> bool:
    """Whether a suite file (``optional/format/uri.json``) is the one a deviation names
    (``format/uri.json``: its last path parts)."""
    return case_file == file or case_file.endswith("/" + file)


def deviation(case: Case) -> str:
    """Why ``case`` disagrees with the suite on purpose ("" when it should not)."""
    for file, words, outcome, reason in _DEVIATIONS:
        if (
            matches_file(case.file, file)
            and outcome == case.outcome
            and (words is None or words in case.group)
        ):
            return reason
    return ""


def iter_runs(
    root: Path, dialects: list[str] | None = None, remote_refs: RemoteRefs | None = None
) -> Iterator[FileRun]:
    for name in dialects or list(DIALECTS):
        dialect = DIALECTS[name]
        for file in suite_files(root, dialect.draft):
            yield run_file(root, dialect, file, remote_refs)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # the suite asks for hundreds of documents


@contextmanager
def serve_remotes(root: Path) -> Iterator[RemoteRefs | None]:
    """The suite's ``remotes/`` served on 127.0.0.1 while the block runs, and the
    :class:`~autofeedback.RemoteRefs` that reads :data:`REMOTES_BASE` from there (and
    nothing else): the folder beside the suite's ``tests/`` where it is, else the
    project's copy (:data:`REMOTES`: the shared data holds ``tests/`` only); ``None``
    when neither is here."""
    folder = root / "remotes"
    if not folder.is_dir():
        folder = REMOTES
    if not folder.is_dir():
        yield None
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield RemoteRefs(mirrors={REMOTES_BASE: f"http://127.0.0.1:{server.server_port}/"})
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


Judge = Callable[[Case], str]
