"""The Python tool: model-written code run in the shared sandbox (``travelgym.sandbox``).

It is the same ``run_code`` the COMPASS code agent uses, without tool bindings: a fresh
interpreter behind the operating-system boundary, whose working directory's files last for the
episode (see ``docs/sandbox.md``). Where there is no sandbox the call is a ``content`` error
that names the requirement.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from travelgym.core.outcomes import InfraError
from travelgym.sandbox import SandboxLimits, SandboxUnavailable, run_code
from travelgym.suites.behavior2trip.context import TripsContext
from travelgym.toolkit import tool

PYTHON_LIMITS = SandboxLimits(wall_seconds=15.0, cpu_seconds=10)
MAX_CODE_CHARS = 20_000


@tool
def Python(code: Annotated[str, Field(max_length=MAX_CODE_CHARS)], ctx: TripsContext) -> dict:
    """Run Python code in a sandboxed process and return what it printed.

    The code runs in a fresh, resource-limited interpreter (15 s wall clock, 10 s CPU, 1 GiB
    memory; no network, no files outside a scratch directory whose files last for the episode).
    Use print() to see results.

    Args:
        code: Python source to execute (at most 20,000 characters).

    Returns:
        ok (true when the code finished without error), stdout, stderr, error (null, or the kind:
        exception, timeout, cpu_limit, memory, refused, crash), the traceback of an exception
        and the wall time in seconds.
    """
    try:
        result = run_code(code, limits=PYTHON_LIMITS, workspace=ctx.workspace)
    except SandboxUnavailable as exc:  # no fault of the model's: the episode cannot be measured
        raise InfraError("sandbox", str(exc)) from None
    return {
        "ok": result.ok,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "error": result.error.value if result.error else None,
        "traceback": result.traceback,
        "wall_seconds": result.wall_seconds,
    }
