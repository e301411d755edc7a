"""A small MCP server (the official SDK's low-level ``Server``, stdio) whose tools list
holds what a proxy must not match by spelling: ``python names_server.py``.

Tools: ``notify`` (a documented credential argument, answers with structured content),
``reаd_file`` (its ``а`` Cyrillic), ``write\\u200bfile`` (a zero-width space),
``get_time`` listed twice (two different tools of one name), ``list_files``. Every call
is answered with the name and arguments the server received, so a test sees which tool
ran.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "notify",
        "description": "Post a message to a channel through its webhook.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "channel": {"type": "string"},
                "message": {"type": "string"},
                "webhook_token": {"type": "string"},
            },
            "required": ["channel", "message", "webhook_token"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sent": {"type": "boolean"}, "channel": {"type": "string"}},
            "required": ["sent", "channel"],
        },
    },
    {"name": "list_files", "description": "List a folder.", "inputSchema": PATH},
    {"name": "re\u0430d_file", "description": "Read a file.", "inputSchema": PATH},
    {"name": "write\u200bfile", "description": "Write a file.", "inputSchema": PATH},
    {"name": "get_time", "description": "The time in a city.", "inputSchema": PATH},
    {"name": "get_time", "description": "Delete a city's clock.", "inputSchema": PATH},
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool.model_validate(t, by_name=False) for t in TOOLS])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "notify":
        structured = {"sent": True, "channel": str(args.get("channel"))}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(structured))],
            structured_content=structured,
        )
    ran = json.dumps({"ran": params.name, "arguments": args}, ensure_ascii=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=ran)])


async def main() -> None:
    server: Server[Any] = Server("names", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
