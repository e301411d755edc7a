"""Check response: did the request meet the requirement?

The default requirement (the paper's ``Meet_Requirement``) is a 2xx response whose body
validates against the documented response schema (openapi-core response validation).
Users pass any ``(operation, response) -> bool`` instead.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

from autofeedback.catalog._catalog import ApiCatalog
from autofeedback.catalog._openapi import to_openapi
from autofeedback.core._model import Operation

__all__ = ["DocumentedResponse", "Requirement"]

#: ``(operation, response) -> bool``: True when the response satisfies the user.
Requirement = Callable[[Operation, requests.Response], bool]


class DocumentedResponse:
    """2xx, and the body matches the documented schema of that status.

    >>> ok = DocumentedResponse(catalog, base_url="http://127.0.0.1:8080")  # doctest: +SKIP
    >>> ok(operation, response)                                             # doctest: +SKIP
    True
    """

    def __init__(self, catalog: ApiCatalog, base_url: str | None = None) -> None:
        self.catalog = catalog
        self.base_url = base_url
        self._openapi: OpenAPI | None = None
        self._lock = threading.Lock()
        self.last_errors: list[str] = []

    def _spec(self) -> OpenAPI:
        with self._lock:
            if self._openapi is None:
                document: dict[str, Any] = copy.deepcopy(to_openapi(self.catalog))
                if self.base_url:
                    servers = document.setdefault("servers", [])
                    servers.insert(0, {"url": self.base_url.rstrip("/")})
                self._openapi = OpenAPI.from_dict(document)
            return self._openapi

    def __call__(self, operation: Operation, response: requests.Response) -> bool:
        self.last_errors = []
        if not 200 <= response.status_code < 300:
            self.last_errors = [f"HTTP {response.status_code}"]
            return False
        if not any(r.status.startswith("2") and r.schema for r in operation.responses):
            return True  # nothing documented to validate against
        try:
            self._spec().validate_response(
                RequestsOpenAPIRequest(response.request),
                RequestsOpenAPIResponse(response),
            )
        except Exception as exc:
            self.last_errors = [f"{type(exc).__name__}: {exc}"[:300]]
            return False
        return True
