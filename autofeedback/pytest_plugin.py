"""The pytest plugin as pytest loads it (``pytest11``, ``-p autofeedback.pytest_plugin``).

Its code lives in :mod:`autofeedback.integrations.pytest_plugin`; this module only names
the hooks and fixtures, so that exactly one module object is registered with pytest.
"""

from autofeedback.integrations.pytest_plugin import (
    GuardFixture,
    autofeedback_guard,
    pytest_addoption,
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_setup,
    pytest_runtest_teardown,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_testnodedown,
)

__all__ = [
    "GuardFixture",
    "autofeedback_guard",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_call",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_testnodedown",
]
