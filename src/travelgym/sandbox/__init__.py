"""Run model-written Python behind an operating-system boundary.

:func:`run_code` starts ``boot.py`` (see :mod:`travelgym.sandbox.inside`) under bubblewrap:
new namespaces, a minimal read-only file system without travelgym or any data, an unprivileged
user, a size-capped tmpfs working directory and resource limits, with an audit hook as a second
layer. Tools reach the code as stubs that send each call to the parent
(:class:`~travelgym.sandbox.bridge.ToolBridge`), which validates, runs and records it. Where
bubblewrap cannot run, code execution raises :class:`SandboxUnavailable` unless
:func:`allow_unsafe` was called. See ``docs/sandbox.md``.
"""

from travelgym.sandbox.boundary import allow_unsafe, describe, require, unsafe_allowed
from travelgym.sandbox.bridge import ToolBridge
from travelgym.sandbox.config import SandboxError, SandboxLimits, SandboxResult, SandboxUnavailable
from travelgym.sandbox.runner import Workspace, run_code

__all__ = [
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "ToolBridge",
    "Workspace",
    "allow_unsafe",
    "describe",
    "require",
    "run_code",
    "unsafe_allowed",
]
