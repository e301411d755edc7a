"""The sandbox: an HTTP server that answers any spec (OpenAPI, tools, BFCL, API-Bank) with
state, and the OpenAPI 3.1 export it serves.

>>> from autofeedback import ApiCatalog
>>> from autofeedback.sandbox import function_path, to_openapi
>>> function_path("math.factorial")
'/math.factorial'
>>> sorted(to_openapi(ApiCatalog.from_tools([{"name": "ping", "parameters": {}}]))["paths"])
['/ping']
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

if _TYPE_CHECKING:
    from autofeedback.catalog._openapi import function_path, to_openapi
    from autofeedback.serve._sandbox import Sandbox

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "function_path": "autofeedback.catalog._openapi",
    "to_openapi": "autofeedback.catalog._openapi",
    "Sandbox": "autofeedback.serve._sandbox",
}


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "Sandbox",
    "function_path",
    "to_openapi",
]
