"""What a sandbox run is given (limits, tool suite) and what it returns."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

SUITES = ("compass",)


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits; time limits include the child's start-up (about 0.1-0.3 s)."""

    wall_seconds: float = 30.0  # enforced by the parent: SIGKILL to the process group
    cpu_seconds: int = 20  # RLIMIT_CPU (user code only; SIGXCPU, then SIGKILL one second later)
    memory_bytes: int = 1 << 30  # RLIMIT_AS: the child's whole address space
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE: the largest file the child may write
    open_files: int = 64  # RLIMIT_NOFILE
    output_chars: int = 20_000  # stdout and stderr are each cut to this many characters

    def __post_init__(self) -> None:
        if self.wall_seconds <= 0 or self.cpu_seconds < 1 or self.output_chars < 0:
            raise ValueError(f"invalid sandbox limits: {self}")
        if self.memory_bytes < 64 << 20 or self.open_files < 16 or self.file_bytes < 0:
            raise ValueError(f"sandbox limits too small to start Python: {self}")


@dataclass(frozen=True)
class ToolsSpec:
    """Which tools the sandboxed code can import (``import tools``) and their database."""

    suite: str
    db_path: str | os.PathLike[str]
    module: str = "tools"

    def __post_init__(self) -> None:
        if self.suite not in SUITES:
            raise ValueError(f"unknown tool suite {self.suite!r}; known: {', '.join(SUITES)}")
        if not Path(self.db_path).is_file():
            raise FileNotFoundError(f"database not found: {self.db_path}")
        if not self.module.isidentifier():
            raise ValueError(f"invalid module name {self.module!r}")


class SandboxError(str, Enum):
    """Why a run did not finish cleanly."""

    TIMEOUT = "timeout"  # wall-clock limit; the process group was killed
    CPU_LIMIT = "cpu_limit"  # RLIMIT_CPU
    MEMORY = "memory"  # MemoryError under RLIMIT_AS, or killed for memory
    REFUSED = "refused"  # the audit hook refused an operation and the code stopped on it
    EXCEPTION = "exception"  # the code raised; see ``traceback``
    CRASH = "crash"  # the interpreter died without reporting (signal, os._exit(n), ...)


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of one ``run_code``."""

    ok: bool
    stdout: str
    stderr: str
    exit_status: int | None  # the child's exit code; negative: killed by that signal
    error: SandboxError | None
    traceback: str | None  # for ``exception`` and ``refused`` (and ``memory`` when raised)
    wall_seconds: float
    cpu_seconds: float
    refusals: tuple[str, ...] = ()  # every refused operation, even ones the code caught
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    pid: int | None = None  # the child's pid, which is also its process group id
