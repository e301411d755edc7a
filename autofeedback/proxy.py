"""The proxies: an OpenAI-compatible HTTP proxy (:func:`create_proxy_app`, configured by
:class:`ProxyConfig`) and an MCP proxy (:class:`McpProxy`) that check an agent's tool
calls on their way to the model's client or the tool server.

>>> from autofeedback.proxy import ProxyConfig
>>> ProxyConfig.__name__
'ProxyConfig'
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from autofeedback.core._lazy import lazy_attributes as _lazy_attributes

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


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY)


__all__ = [
    "McpProxy",
    "McpProxyOptions",
    "ProxyConfig",
    "create_proxy_app",
]
