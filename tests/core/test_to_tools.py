"""ApiCatalog.to_tools(): any catalog (an OpenAPI document included) as an OpenAI tools
list that providers accept and that loads back into the same operations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autofeedback import ApiCatalog, Scanner

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _check(tools: list[dict[str, Any]]) -> None:
    names = [t["function"]["name"] for t in tools]
    assert len(names) == len(set(names))
    for tool in tools:
        assert tool["type"] == "function"
        assert _VALID.fullmatch(tool["function"]["name"]), tool["function"]["name"]
        params = tool["function"]["parameters"]
        assert params["type"] == "object"
        assert set(params.get("required", [])) <= set(params["properties"])
        assert len(tool["function"].get("description", "")) <= 1024


def test_openapi_round_trip(bookshop: ApiCatalog) -> None:
    tools = bookshop.to_tools()
    _check(tools)
    back = ApiCatalog.from_tools(tools)
    assert back.names == bookshop.names
    search = back.get("searchBooks")
    assert search is not None and {p.name for p in search.parameters} == {
        "query",
        "genre",
        "published_after",
        "limit",
        "sort",
    }
    # the exported tools judge a call as the OpenAPI document does
    scanner = Scanner(back)
    codes = [f.code for f in scanner.iter_findings('<API>searchBooks(Query="dune")</API>')]
    assert codes[0] == "E3.2"


def test_real_specs_export_valid_tools(shared_data_dir: Path) -> None:
    for name in ("openai.yaml", "box.json"):
        catalog = ApiCatalog.from_file(shared_data_dir / "specs" / name)
        tools = catalog.to_tools()
        _check(tools)
        assert len(tools) >= len({op.name for op in catalog}) * 0.9
        ApiCatalog.from_tools(tools)  # loads back without a spec error
