"""travelgym: benchmarks and training environments for LLM travel-planning agents.

The Python API (:mod:`travelgym.api`): ``evaluate(suite, agent, **options)``,
``load_suite(name)`` and ``make_env(suite, **options)``, imported on first use so that
``import travelgym`` stays cheap.
"""

from typing import Any

from travelgym.version import __version__

_API = ("RunResult", "aevaluate", "evaluate", "load_suite", "make_env")


def __getattr__(name: str) -> Any:
    if name in _API:
        from travelgym import api

        return getattr(api, name)
    raise AttributeError(f"module 'travelgym' has no attribute {name!r}")


__all__ = ["__version__", *_API]
