"""The child's audit hook: which audited operations model code may not perform.

Refused: creating processes, signalling other processes, sockets and network clients, ctypes,
new SQLite connections and extensions, raising resource limits, more audit hooks, new
interpreters, importing modules that bypass those events, and writing, creating, removing or
changing files outside the working directory (or the protected database files anywhere).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the sandbox's start-up time
    from collections.abc import Callable
    from typing import Any

AF_UNIX = 1  # socket.AF_UNIX on Linux, without importing socket at start-up

FORBIDDEN_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.kill",
        "os.killpg",
        "os.startfile",
        "signal.pthread_kill",
        "resource.setrlimit",
        "resource.prlimit",
        "sys.addaudithook",
        "cpython.PyInterpreterState_New",
        "webbrowser.open",
    }
)
FORBIDDEN_PREFIXES = (
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "subprocess.",
    "_posixsubprocess.",
    "socket.",
    "ctypes.",
    "sqlite3.",
    "urllib.",
    "http.client.",
    "ftplib.",
    "smtplib.",
    "imaplib.",
    "poplib.",
    "nntplib.",
    "telnetlib.",
    "winreg.",
    "_winapi.",
    "msvcrt.",
)
FORBIDDEN_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "_posixsubprocess",
        "posix",
        "_signal",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        "_testcapi",
        "_testinternalcapi",
        "_winapi",
        "msvcrt",
    }
)
# event -> ((index of a path argument, index of its dir_fd argument or None), ...)
PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)),
    "os.link": ((0, 2), (1, 3)),
    "os.symlink": ((1, 2),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.truncate": ((0, None),),
    "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "shutil.rmtree": ((0, 1),),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.copytree": ((1, None),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.chown": ((0, None),),
    "shutil.make_archive": ((0, None),),
    "shutil.unpack_archive": ((1, None),),
    "tempfile.mkstemp": ((0, None),),
    "tempfile.mkdtemp": ((0, None),),
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
ALWAYS_WRITABLE = frozenset({"/dev/null"})
# Functions that change the system but raise no audit event; replaced by refusing stubs.
UNAUDITED = {"os": ("mknod", "mkfifo", "chroot", "pidfd_open"), "signal": ("pidfd_send_signal",)}


class SandboxViolation(PermissionError):
    """Raised (by the audit hook) when model code attempts a refused operation."""


class RefusedImport(ImportError):
    """Raised for a refused import (an ImportError, so optional imports degrade gracefully)."""


# Shown to the model as ``sandbox.SandboxViolation`` and ``sandbox.RefusedImport``.
SandboxViolation.__module__ = RefusedImport.__module__ = "sandbox"


class Policy:
    """Decides whether an audit event is allowed; ``check`` returns the refusal reason."""

    def __init__(self, workdir: str, protected: tuple[str, ...] = ()) -> None:
        self.workdir = os.path.realpath(workdir)
        self.protected = frozenset(os.path.realpath(p) for p in protected)

    def check(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event == "socket.__new__" and len(args) > 1 and args[1] == AF_UNIX:
            return None  # socketpair() for asyncio; connecting and binding stay refused
        if event in FORBIDDEN_EVENTS or event.startswith(FORBIDDEN_PREFIXES):
            return "operation not allowed in the sandbox"
        if event == "import":
            top = str(args[0]).partition(".")[0]
            return (
                f"module {top} is not allowed in the sandbox" if top in FORBIDDEN_IMPORTS else None
            )
        if event == "open":
            return self._check_open(*args[:3])
        for path_index, fd_index in PATH_EVENTS.get(event, ()):
            if path_index >= len(args) or isinstance(args[path_index], int):
                continue
            dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
            reason = self._check_path(args[path_index], dir_fd)
            if reason:
                return reason
        if event == "os.symlink":  # the link's target must stay inside too
            base = os.path.dirname(self._resolve(args[1], args[2]) or "/")
            return self._check_path(os.path.join(base, os.fsdecode(args[0])), None)
        return None

    def _check_open(self, path: Any, mode: Any, flags: Any) -> str | None:
        if path is None or isinstance(path, int):
            return None  # an already open descriptor
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        if writing:
            return self._check_path(path, None)
        resolved = self._resolve(path, None)
        if resolved and not self._inside(resolved) and os.path.isdir(resolved):
            return f"opening directory {resolved} (outside the working directory)"
        return None

    def _check_path(self, path: Any, dir_fd: Any) -> str | None:
        resolved = self._resolve(path, dir_fd)
        if resolved is None:
            return f"unresolvable path {path!r}"
        if resolved in ALWAYS_WRITABLE:
            return None
        if resolved in self.protected:
            return f"changing protected file {resolved}"
        if not self._inside(resolved):
            return f"changing {resolved} (outside the working directory {self.workdir})"
        return None

    def _inside(self, resolved: str) -> bool:
        return resolved == self.workdir or resolved.startswith(self.workdir + os.sep)

    @staticmethod
    def _resolve(path: Any, dir_fd: Any) -> str | None:
        try:
            text = os.fsdecode(path)
            if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(text):
                text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
            return os.path.realpath(text)
        except (TypeError, ValueError, OSError):
            return None


def _refusing_stub(name: str, refusals: list[str], limit: int) -> Callable[..., Any]:
    def stub(*args: Any, **kwargs: Any) -> Any:
        if len(refusals) < limit:
            refusals.append(f"{name}: operation not allowed in the sandbox")
        raise SandboxViolation(f"sandbox refused {name}: operation not allowed in the sandbox")

    stub.__name__ = name
    return stub


def install(policy: Policy, refusals: list[str], limit: int = 20) -> None:
    """Install the audit hook (irrevocable) and stub out unaudited dangerous functions."""
    if "subprocess" in sys.modules:  # its C helper forks without an audit event
        sys.modules["subprocess"]._posixsubprocess = None  # type: ignore[attr-defined]
    sys.modules.pop("_posixsubprocess", None)
    for module_name, names in UNAUDITED.items():
        modules = [sys.modules.get(module_name), sys.modules.get(f"_{module_name}")]
        if module_name == "os":
            modules.append(sys.modules.get("posix"))
        for module in filter(None, modules):
            for name in names:
                if hasattr(module, name):
                    setattr(module, name, _refusing_stub(f"{module_name}.{name}", refusals, limit))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        reason = policy.check(event, args)
        if reason is not None:
            if len(refusals) < limit:
                refusals.append(f"{event}: {reason}")
            error = RefusedImport if event == "import" else SandboxViolation
            raise error(f"sandbox refused {event}: {reason}")

    sys.addaudithook(hook)
