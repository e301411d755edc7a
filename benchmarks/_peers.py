"""The peers the benchmarks compare against, run on the same records in the same run.

* openapi-core's request validator (OpenAPI-based records): the call is turned into the
  HTTP request it stands for (path template filled, other arguments in the query or a
  JSON body) and validated; a name that is not an operation is sent to ``/<name>``,
  which is what a client would do with it.
* BFCL's AST checker (``bfcl-eval`` from PyPI, benchmark-only): installed with
  ``--no-deps`` into ``benchmarks/.work/bfcl``. Its ``ast_checker`` module imports the
  leaderboard's model registry, which imports a dozen vendor SDKs; only that registry
  is replaced (``underscore_to_dot=False`` for our pseudo-model). The checking code
  itself is bfcl-eval's, unchanged. Note that it compares against the *gold answers*:
  it is an oracle, not a documentation checker.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest

from autofeedback import ApiCatalog

BFCL_VERSION = "2026.3.23"
WORK = Path(__file__).resolve().parent / ".work"


class OpenApiCorePeer:
    """openapi-core validating the HTTP form of function calls against one spec."""

    def __init__(self, document: dict[str, Any], catalog: ApiCatalog) -> None:
        self.spec_checked = True
        try:
            self.openapi = OpenAPI.from_dict(document)
        except Exception:
            # real specs often do (ToolAlpaca's AviationAPI has paths without a leading
            # slash); validate requests against them anyway, as a lenient user would
            self.spec_checked = False
            self.openapi = OpenAPI.from_dict(document, config=Config(spec_validator_cls=None))
        self.catalog = catalog
        self.base = (catalog.servers[0] if catalog.servers else "http://localhost").rstrip("/")

    def http_request(self, name: str, args: dict[str, Any]) -> requests.PreparedRequest:
        op = self.catalog.get(name)
        if op is None or not op.is_http:
            return requests.Request("GET", f"{self.base}/{quote(name)}", params=args).prepare()
        assert op.path is not None and op.method is not None
        path = op.path
        query: dict[str, Any] = {}
        body: dict[str, Any] = {}
        headers: dict[str, str] = {}
        for k, v in args.items():
            p = op.parameter(k)
            text = v if isinstance(v, str) else _text(v)
            if p is not None and p.location == "path":
                path = path.replace("{" + k + "}", quote(text, safe=""))
            elif p is not None and p.location == "header":
                headers[k] = text
            elif p is not None and p.location == "body":
                body[k] = v
            else:
                query[k] = v if isinstance(v, list) else text
        kwargs: dict[str, Any] = {"params": query, "headers": headers}
        if body or op.body_required:
            kwargs["json"] = body
        return requests.Request(op.method, self.base + path, **kwargs).prepare()

    def flags(self, name: str, args: dict[str, Any]) -> bool:
        request = RequestsOpenAPIRequest(self.http_request(name, args))
        try:
            self.openapi.validate_request(request)
        except Exception:
            return True
        return False


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def load_bfcl_checker() -> Any:
    """``bfcl_eval``'s ``ast_checker`` function, installing bfcl-eval if needed."""
    target = WORK / "bfcl"
    if not (target / "bfcl_eval").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--target",
                str(target),
                f"bfcl-eval=={BFCL_VERSION}",
            ],
            check=True,
        )
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    registry = types.ModuleType("bfcl_eval.constants.model_config")

    class _Config:
        underscore_to_dot = False

    class _Mapping(dict[str, Any]):
        def __missing__(self, key: str) -> Any:
            return _Config()

    registry.MODEL_CONFIG_MAPPING = _Mapping()  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = registry
    from bfcl_eval.constants.enums import Language  # type: ignore[import-not-found]
    from bfcl_eval.eval_checker.ast_eval.ast_checker import (  # type: ignore[import-not-found]
        ast_checker,
    )

    def check(
        functions: list[dict[str, Any]],
        output: list[dict[str, Any]] | None,
        answer: list[dict[str, Any]],
        category: str,
    ) -> bool:
        """True when BFCL flags the output (decode failure or checker says invalid)."""
        if output is None:
            return True
        try:
            result = ast_checker(
                functions, output, answer, Language.PYTHON, category, "autofeedback-benchmark"
            )
        except Exception:
            return True
        return not result["valid"]

    return check
