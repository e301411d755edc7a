"""A small MCP server written with the official SDK's low-level ``Server``, used behind
``autofeedback mcp-proxy`` in the tests and the benchmark.

``python weather_server.py`` serves stdio; ``python weather_server.py --http PORT`` serves
streamable HTTP on 127.0.0.1:PORT/mcp. Tools: ``get_weather`` (an enum), ``search_flights``
(nested object and array arguments), ``tag_items`` (a schema providers reject),
``enable_beta`` (adds a tool and sends ``notifications/tools/list_changed``),
``lookup_order`` (fails with a terse error), ``account`` (needs the header
``Authorization: Bearer test-token`` over HTTP), ``count`` (reports progress),
``echo`` (for the latency benchmark), ``slow`` (answers after ``seconds``) and
``crash`` (the server exits at once); one prompt (``trip``) and one resource
(``data://cities``), which the proxy passes through. With ``WEATHER_HANG_RELIST=1`` in
its environment the server answers ``tools/list`` once and never again. With
``WEATHER_EVENTS=FILE`` it appends a line to FILE for each ``tools/list`` it is asked
(``listed``) and each ``slow`` call it starts (``slow SECONDS``), and a ``slow`` call also
ends as soon as the file ``FILE.release-SECONDS`` exists: the tests see what the server
was asked, and say when a slow call is answered, without timing anything.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "city name"},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
            },
            "required": ["city"],
        },
    },
    {
        "name": "search_flights",
        "description": "Search flights on a route for some dates.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "route": {
                    "type": "object",
                    "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                    "required": ["from", "to"],
                },
                "dates": {"type": "array", "items": {"type": "string"}},
                "passengers": {"type": "integer", "minimum": 1},
            },
            "required": ["route", "dates"],
        },
    },
    {
        # what hand-written servers ship: no items, a Python type name, a dangling required
        "name": "tag_items",
        "description": "Attach tags to items.",
        "inputSchema": {
            "type": "object",
            "properties": {"tags": {"type": "array"}, "limit": {"type": "int"}},
            "required": ["tags", "owner"],
        },
    },
    {
        "name": "enable_beta",
        "description": "Turn on the beta tools.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "lookup_order",
        "description": "Look up an order by its id (ORD- followed by 6 digits).",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "e.g. ORD-123456"}},
            "required": ["order_id"],
        },
    },
    {
        "name": "account",
        "description": "The caller's account (HTTP only, with a bearer token).",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "count",
        "description": "Count to three, reporting progress.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "echo",
        "description": "Return the arguments as given.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "slow",
        "description": "Answer after some seconds.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "crash",
        "description": "Exit the server process at once.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
BETA = {
    "name": "beta_forecast",
    "description": "Ten-day forecast (beta).",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
state = {"beta": False, "listed": 0}
EVENTS = os.environ.get("WEATHER_EVENTS")


def event(line: str) -> None:
    if EVENTS:
        with open(EVENTS, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def tools() -> list[types.Tool]:
    listed = TOOLS + ([BETA] if state["beta"] else [])
    return [types.Tool.model_validate(t, by_name=False) for t in listed]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    state["listed"] += 1
    event("listed")
    if state["listed"] > 1 and os.environ.get("WEATHER_HANG_RELIST") == "1":
        await anyio.sleep_forever()  # a server that stops answering tools/list
    return types.ListToolsResult(tools=tools())


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "enable_beta":
        state["beta"] = True
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="beta on")])
    if params.name == "account":
        headers = getattr(ctx.request, "headers", None)
        if headers is None or headers.get("authorization") != "Bearer test-token":
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="unauthorized")], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text="account 7")])
    if params.name == "count":
        token = (params.meta or {}).get("progress_token")
        for i in (1, 2, 3):
            if token is not None:
                await ctx.session.send_progress_notification(
                    token, i, 3, f"step {i}", related_request_id=str(ctx.request_id)
                )
        return types.CallToolResult(content=[types.TextContent(type="text", text="3")])
    if params.name == "slow":
        seconds = float(args.get("seconds", 1))
        event(f"slow {seconds:g}")
        with anyio.move_on_after(seconds):
            while not (EVENTS and os.path.exists(f"{EVENTS}.release-{seconds:g}")):
                await anyio.sleep(0.02)
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])
    if params.name == "crash":
        os._exit(3)
    if params.name == "lookup_order":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="bad id")], is_error=True
        )
    if params.name == "get_weather":
        text = f"Sunny in {args.get('city')}, 21 degrees"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content={"city": args.get("city"), "temp": 21},
        )
    # search_flights, tag_items, echo, beta_forecast: the arguments exactly as received
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=json.dumps({params.name: args}, sort_keys=True))
        ]
    )


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[types.Prompt(name="trip", description="Plan a trip")])


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    text = f"Plan a trip to {(params.arguments or {}).get('city', 'somewhere')}."
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(messages=[message])


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(name="cities", uri="data://cities")])


async def read_resource(
    ctx: Any, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    contents = types.TextResourceContents(uri=params.uri, text="Paris\nLima\nOslo")
    return types.ReadResourceResult(contents=[contents])


server: Server[Any] = Server(
    "weather",
    version="1.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def main() -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
        await uvicorn.Server(config).serve()
        return
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
