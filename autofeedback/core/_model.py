"""The internal model every spec format is loaded into, and the request shape every
LLM output format is parsed into.

Everything here is a frozen dataclass: specs are loaded once and shared between
threads, requests are values that checks only read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

__all__ = ["ApiRequest", "Operation", "Output", "Parameter", "Response", "ToolCallShape"]

#: Where a parameter travels. ``"argument"`` is a parameter of a function-style API
#: (OpenAI tools, BFCL, API-Bank) that has no HTTP placement.
Location = Literal["path", "query", "header", "cookie", "body", "argument"]


@dataclass(frozen=True)
class Parameter:
    """One documented parameter.

    ``schema`` is a JSON Schema (draft 2020-12 vocabulary, OpenAPI's ``nullable`` already
    folded into ``type``); ``style``/``explode`` are OpenAPI serialization hints used to
    deserialize HTTP query strings before type-checking.
    """

    name: str
    location: Location
    schema: Mapping[str, Any] = field(default_factory=dict)
    required: bool = False
    description: str = ""
    style: str | None = None
    explode: bool | None = None


@dataclass(frozen=True)
class Response:
    """One documented response: ``status`` is ``"200"``, ``"4XX"`` or ``"default"``.

    ``links`` are OpenAPI 3 link objects by name (``$ref``s resolved): which later
    operation takes which value of this response (``{"operationId": "getUser",
    "parameters": {"userId": "$response.body#/id"}}``).
    """

    status: str
    description: str = ""
    schema: Mapping[str, Any] | None = None
    example: Any = None
    links: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Operation:
    """One API: an OpenAPI operation or a function.

    ``name`` is the ``operationId`` when the spec gives one, else ``"METHOD /path"``;
    function-style APIs have ``method`` and ``path`` set to ``None``.
    ``body_schema`` is the JSON request body schema, whose top-level properties are also
    listed in ``parameters`` with location ``"body"``.
    """

    name: str
    description: str = ""
    method: str | None = None
    path: str | None = None
    parameters: tuple[Parameter, ...] = ()
    responses: tuple[Response, ...] = ()
    body_schema: Mapping[str, Any] | None = None
    #: whether the spec requires a body at all (OpenAPI's ``requestBody.required``);
    #: fields its schema requires matter only once a body is sent
    body_required: bool = False
    #: the body's media type (``application/json``, ``multipart/form-data``...)
    body_media: str | None = None
    #: query pairs the documented path itself carries (``/responses?beta=true``), which
    #: tell this operation from another one on the same method and path
    fixed_query: tuple[tuple[str, str], ...] = ()
    source: str = ""
    tags: tuple[str, ...] = ()
    #: Credentials the spec's security schemes carry in a query, header or cookie
    #: (``apiKey`` schemes): accepted where they appear, never reported as unknown.
    auth_parameters: tuple[Parameter, ...] = ()
    #: MCP's tool annotations: ``readOnlyHint`` (``True``: the tool changes nothing) and
    #: ``destructiveHint`` (``True``: it may delete or overwrite); ``None`` where the spec
    #: does not say. A repair never renames a call to an operation of stronger effect.
    read_only: bool | None = None
    destructive: bool | None = None
    #: the parts of this operation's documentation that could not be read (a ``$ref``
    #: that points nowhere, an unknown key where a known one was expected), each as the
    #: place in the spec: nothing is repaired against an operation only partly read
    unread: tuple[str, ...] = ()
    #: a function's schema for the arguments it does not list, where its parameters say
    #: ``additionalProperties: true`` (``{}``: any value) or give a schema there (a map
    #: such as ``{"env": "prod"}``); ``None``: it takes none, and an unlisted one is E3
    extra_arguments: Mapping[str, Any] | None = None
    #: what a function's parameters schema says of its arguments as a whole
    #: (``maxProperties``, ``minProperties``, ``dependentRequired``, ``propertyNames``,
    #: and the compositions at its top: ``oneOf``, ``anyOf``, ``allOf``, ``not``,
    #: ``if``/``then``/``else``, ``dependentSchemas``), as one schema; ``None`` where it
    #: says nothing of them
    whole_arguments: Mapping[str, Any] | None = None

    @property
    def is_http(self) -> bool:
        return self.method is not None and self.path is not None

    @property
    def error_responses(self) -> tuple[Response, ...]:
        """Documented non-2xx responses (``4XX``, ``500``, ``default``...)."""
        return tuple(r for r in self.responses if not r.status.startswith("2"))

    def parameter(self, name: str, location: Location | None = None) -> Parameter | None:
        """The documented parameter ``name`` (the first one, or the one in ``location``)."""
        for p in self._by_name.get(name, ()):
            if location is None or p.location == location:
                return p
        return None

    @cached_property
    def _by_name(self) -> Mapping[str, tuple[Parameter, ...]]:
        # a dict, built on first use: the checks ask for each argument sent, and a tool of
        # 5,000 properties called with 2,000 names was 10 million comparisons
        index: dict[str, list[Parameter]] = {}
        for p in self.parameters:
            index.setdefault(p.name, []).append(p)
        return {k: tuple(v) for k, v in index.items()}


RequestFormat = Literal[
    "api-tag",  # <API>Name(k=v)</API>, the AutoFeedback paper's format
    "python",  # Name(k=v)
    "api-bank",  # API-Request: [Name(k='v')]
    "json",  # {"name": ..., "arguments": ...}
    "openai",  # OpenAI tool_calls
    "restgpt",  # Operation: GET / Input: {"url", "params", "data"}
    "http",  # GET /movie/550/credits?language=en
    "request",  # a structured {"method", "url", ...} record (audit logs, requests adapter)
    "native",  # a model family's own tool-call syntax, typed values (DeepSeek, Mistral...)
    "xml",  # XML-style tool calls: values are text, read per the parameter's schema
]

#: The provider API a native tool call came in: OpenAI Chat ``tool_calls``, OpenAI
#: Responses ``function_call`` items, Anthropic ``tool_use`` blocks, Gemini
#: ``functionCall`` parts, Bedrock Converse ``toolUse`` blocks. Feedback and tool results
#: for such a call are written in the same shape.
ToolCallShape = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"]


@dataclass(frozen=True)
class ApiRequest:
    """One request an LLM produced, in either of two shapes.

    * a *call*: ``name`` and ``arguments`` (function-call formats);
    * an *HTTP request*: ``method`` and ``url`` (path and query string, absolute or not),
      with ``params`` (extra query parameters), ``headers`` and ``body``.

    ``raw`` is the text it was parsed from, ``format`` which parser recognised it.
    ``shape`` is the provider tool-call shape it came in (``None`` for text formats) and
    ``call_id`` that call's id (``tool_call_id``, ``call_id``, ``tool_use_id``...); neither
    takes part in equality, so the same call made twice compares equal.
    ``double_encoded``: the arguments were a JSON string holding the JSON object.
    """

    name: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    method: str | None = None
    url: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    format: RequestFormat = "json"
    raw: str = ""
    shape: ToolCallShape | None = field(default=None, compare=False)
    call_id: str | None = field(default=None, compare=False)
    #: the arguments came as a JSON string holding the JSON object (encoded twice): read,
    #: and reported as E4.1 at ``arguments``
    double_encoded: bool = False
    #: the files a command or code uploads from the machine it runs on (``curl -F
    #: f=@photo.jpg``, HTTPie's ``f@photo.jpg``, requests' ``files=``), by part name:
    #: their content is not known here, so the body holds those parts empty. Such a
    #: request is checked, never sent: an empty file is not the upload that was written
    unread_files: tuple[str, ...] = ()

    @property
    def is_http(self) -> bool:
        return self.method is not None and self.url is not None


#: What can be scanned: raw LLM text, a parsed request, or an audit-log shaped mapping
#: (``{"name", "arguments"}`` call or ``{"method", "url", ...}`` request).
Output = str | ApiRequest | Mapping[str, Any]
