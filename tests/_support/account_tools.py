"""Two tools with a data dependency, shared by the sequence, guard and proxy tests:
``GetUserToken`` returns the ``token`` that ``DeleteAccount`` needs (so a made-up token
is an E5.3, and deleting an account is the destructive call E2.1 asks about)."""

from __future__ import annotations

from typing import Any

GET_TOKEN: dict[str, Any] = {
    "name": "GetUserToken",
    "description": "Get the user's token from their username and password",
    "parameters": {
        "type": "object",
        "properties": {"username": {"type": "string"}, "password": {"type": "string"}},
        "required": ["username", "password"],
    },
    "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}},
}
DELETE_ACCOUNT: dict[str, Any] = {
    "name": "DeleteAccount",
    "description": "Delete the user's account",
    "parameters": {
        "type": "object",
        "properties": {"token": {"type": "string"}},
        "required": ["token"],
    },
}
#: plain (MCP-like) tool definitions
ACCOUNT_TOOLS: list[dict[str, Any]] = [GET_TOKEN, DELETE_ACCOUNT]
#: the same, as OpenAI Chat Completions ``tools``
OPENAI_ACCOUNT_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": tool} for tool in ACCOUNT_TOOLS
]
