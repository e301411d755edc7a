"""The proxies: an OpenAI-compatible HTTP proxy (:func:`create_proxy_app`, configured by
:class:`ProxyConfig`) and an MCP proxy (:class:`McpProxy`) that check an agent's tool
calls on their way to the model's client or the tool server.

>>> from autofeedback.proxy import ProxyConfig
>>> ProxyConfig.__name__
'ProxyConfig'
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from autofeedback.integrations._mcp_proxy import McpProxy, McpProxyOptions
    from autofeedback.integrations._proxy import create_proxy_app
    from autofeedback.integrations._proxy_config import ProxyConfig

# loaded on first use: importing this module imports nothing heavy
_LAZY: dict[str, str] = {
    "McpProxy": "autofeedback.integrations._mcp_proxy",
    "McpProxyOptions": "autofeedback.integrations._mcp_proxy",
    "ProxyConfig": "autofeedback.integrations._proxy_config",
    "create_proxy_app": "autofeedback.integrations._proxy",
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
    "McpProxy",
    "McpProxyOptions",
    "ProxyConfig",
    "create_proxy_app",
]
