"""Run model-written Python in a separate, limited and audited process.

The code agent's programs never run in the benchmark's own process: :func:`run_code` starts a
fresh ``python -I`` child with resource limits, a wall-clock kill of its process group and an
audit hook that refuses processes, sockets, ctypes, database connections and file changes
outside the working directory. The tools are importable there as ``tools`` (see
:mod:`travelgym.toolkit.codegen`). See ``docs/sandbox.md`` for the limits and the caveats.
"""

from travelgym.sandbox.config import SandboxError, SandboxLimits, SandboxResult, ToolsSpec
from travelgym.sandbox.runner import run_code
from travelgym.toolkit.codegen import describe_tools

__all__ = [
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "ToolsSpec",
    "describe_tools",
    "run_code",
]
