"""What a sandbox run is given (limits) and what it returns."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from travelgym.sandbox.storage import EPISODE_BYTES, RESULT_BYTES


@dataclass(frozen=True)
class SandboxLimits:
    """Per-call limits; time limits include the sandbox's start-up (about 20-40 ms)."""

    wall_seconds: float = 30.0  # enforced by the parent: the sandbox is killed
    cpu_seconds: int = 20  # RLIMIT_CPU (user code only; SIGXCPU, then SIGKILL one second later)
    memory_bytes: int = 1 << 30  # RLIMIT_AS: the interpreter's whole address space
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE: the largest file the code may write
    disk_bytes: int = 64 << 20  # size of the working directory's tmpfs: all files together
    open_files: int = 64  # RLIMIT_NOFILE
    processes: int = 16  # RLIMIT_NPROC of the sandbox's own unprivileged user
    output_chars: int = 20_000  # stdout and stderr are each cut to this many characters
    tool_calls: int = 1_000  # tool calls one run may make; later ones are answered with an error
    result_bytes: int = RESULT_BYTES  # stored of one value (a tool call's arguments or result)
    stored_bytes: int = EPISODE_BYTES  # stored of all the calls of one episode (one Workspace)

    def __post_init__(self) -> None:
        if self.wall_seconds <= 0 or self.cpu_seconds < 1 or self.output_chars < 0:
            raise ValueError(f"invalid sandbox limits: {self}")
        if self.memory_bytes < 64 << 20 or self.open_files < 16 or self.file_bytes < 0:
            raise ValueError(f"sandbox limits too small to start Python: {self}")
        if (
            self.disk_bytes < 1 << 20
            or self.processes < 4
            or self.tool_calls < 0
            or self.result_bytes < 1 << 10
            or self.stored_bytes < self.result_bytes
        ):
            raise ValueError(f"invalid sandbox limits: {self}")


class SandboxUnavailable(RuntimeError):
    """Model-written code cannot run: no operating-system sandbox here (the message says why)."""


class SandboxError(str, Enum):
    """Why a run did not finish cleanly."""

    TIMEOUT = "timeout"  # wall-clock limit; the sandbox was killed
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
    exit_status: int | None  # the exit code; negative: killed by that signal
    error: SandboxError | None
    traceback: str | None  # for ``exception`` and ``refused`` (and ``memory`` when raised)
    wall_seconds: float
    cpu_seconds: float
    refusals: tuple[str, ...] = ()  # every refused operation, even ones the code caught
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    pid: int | None = None  # the host pid of the sandbox's outermost process
    tool_calls: int = 0  # tool calls the code made (each recorded by the caller's bridge)
    boundary: str = ""  # "bubblewrap" or "unsafe" (no operating-system boundary)
    workspace_saved: bool = True  # False when the call's file changes could not be kept
