"""Tools as a real MCP server lists them: structured output from a return type becomes
the operation's response, and feeds the data-flow graph."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from autofeedback import ApiCatalog
from autofeedback.flow import success_response
from autofeedback.sequences import FlowGraph, schema_at

mcpserver = pytest.importorskip("mcp.server.mcpserver", reason="needs the mcp package (2.x)")
pydantic = pytest.importorskip("pydantic")


class Token(pydantic.BaseModel):
    token: str
    expires_in: int


def _server() -> Any:
    server = mcpserver.MCPServer("accounts")

    @server.tool()
    def GetUserToken(username: str, password: str) -> Token:
        """Log in and get a token."""
        return Token(token="t", expires_in=60)

    @server.tool()
    def DeleteAccount(token: str) -> str:
        """Delete the account the token belongs to."""
        return "deleted"

    return server


def test_real_mcp_server_tools_list_feeds_the_graph() -> None:
    server = _server()
    listed = server.list_tools()
    tools = asyncio.run(listed) if inspect.isawaitable(listed) else listed
    dumped = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]}
    catalog = ApiCatalog.from_obj(dumped)
    token_op = catalog.get("GetUserToken")
    assert token_op is not None
    assert [p.name for p in token_op.parameters] == ["username", "password"]
    expires = schema_at(success_response(token_op) or {}, "expires_in")
    assert expires is not None and expires["type"] == "integer"
    top = FlowGraph.from_catalog(catalog).producers("DeleteAccount", "token")[0]
    assert (top.operation, top.path) == ("GetUserToken", "token")
