"""The sandbox: an HTTP server that answers any spec (OpenAPI, tools, BFCL, API-Bank) with
state, and the OpenAPI 3.1 export it serves.

>>> from autofeedback import ApiCatalog
>>> from autofeedback.sandbox import function_path, to_openapi
>>> function_path("math.factorial")
'/math.factorial'
>>> sorted(to_openapi(ApiCatalog.from_tools([{"name": "ping", "parameters": {}}]))["paths"])
['/ping']
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from autofeedback.catalog._openapi import function_path, to_openapi
    from autofeedback.serve._sandbox import Sandbox

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "function_path": "autofeedback.catalog._openapi",
    "to_openapi": "autofeedback.catalog._openapi",
    "Sandbox": "autofeedback.serve._sandbox",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Sandbox",
    "function_path",
    "to_openapi",
]
