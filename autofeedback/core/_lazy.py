"""Names a public module loads on first use (PEP 562's module ``__getattr__``), so that
importing ``autofeedback.proxy`` or ``autofeedback.llm`` imports nothing heavy.

>>> import types, sys
>>> demo = types.ModuleType("demo")
>>> sys.modules["demo"] = demo
>>> demo.__getattr__, demo.__dir__ = lazy_attributes("demo", {"dumps": "json"})
>>> demo.dumps([1])
'[1]'
>>> "dumps" in dir(demo)
True
>>> del sys.modules["demo"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    module: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module named ``module``: each name of
    ``homes`` is imported from the module it maps to when first used, then kept in the
    module's namespace; any other name is an ``AttributeError``."""
    namespace = sys.modules[module].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
