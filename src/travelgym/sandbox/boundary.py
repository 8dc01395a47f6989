"""The operating-system boundary around model-written code: bubblewrap, or an explicit unsafe mode.

Every sandbox call runs ``boot.py`` under ``bwrap`` in new user, PID, mount, network, IPC, UTS
and cgroup namespaces, with a fresh ``/proc``, no controlling terminal, a minimal read-only
file system (the interpreter, its standard library, the shared libraries they load and the
runtime files; no site-packages, no travelgym, no data or run directory, no home) and a
size-capped tmpfs as the working directory. As root, the sandbox runs under an unprivileged
host user id (``setpriv``), so that the kernel applies ``RLIMIT_NPROC`` to it.

Where bubblewrap cannot run, :func:`current` raises :class:`SandboxUnavailable` unless
:func:`allow_unsafe` was called (the CLI's ``--unsafe-sandbox``): then the code runs in a plain
child process behind the audit hook and limits only.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from travelgym.sandbox import seccomp
from travelgym.sandbox.config import SandboxLimits, SandboxUnavailable

INSIDE = Path(__file__).resolve().parent / "inside"
RUNTIME_FILES = ("boot.py", "runtime.py", "channel.py", "guard.py", "stubs.py", "workspace.py")
WORKDIR, RUNTIME_MOUNT = "/work", "/sandbox"
SYSTEM_FILES = ("/etc/ld.so.cache",)
UID_BASE = 1 << 30  # host user ids for sandboxes started by root: above any real account
REQUIREMENT = (
    "model-written code runs only inside the bubblewrap sandbox (bwrap) with unprivileged "
    "user namespaces on Linux: {reason}. Install it (Debian/Ubuntu: apt-get install "
    "bubblewrap), or pass --unsafe-sandbox to run code without an operating-system boundary "
    "(unsafe: the code can read the answer key)"
)
_PROBE = "import json, sys; print(json.dumps({'path': sys.path, 'version': sys.version}))"
_SITE_PROBE = "import json, site; print(json.dumps(site.getsitepackages()))"

_unsafe = False
_lock = threading.Lock()
_slots: set[int] = set()


def allow_unsafe(flag: bool = True) -> None:
    """Let code run without bubblewrap where bubblewrap is unavailable (``--unsafe-sandbox``)."""
    global _unsafe
    _unsafe = bool(flag)


def unsafe_allowed() -> bool:
    """Whether :func:`allow_unsafe` is in force."""
    return _unsafe


@dataclass(frozen=True)
class Boundary:
    """How sandboxed code is started on this machine."""

    kind: str  # "bubblewrap" or "unsafe"
    python: str
    runtime: str  # host directory holding the runtime files
    bwrap: str | None = None
    mounts: tuple[str, ...] = field(default=())  # bwrap arguments of the read-only file system
    reason: str = ""  # why bubblewrap is not used (unsafe mode)

    @property
    def workdir(self) -> str | None:
        """The code's working directory inside the sandbox (None: a host temp directory)."""
        return WORKDIR if self.kind == "bubblewrap" else None

    def describe(self) -> dict[str, str]:
        """What a run manifest records."""
        out = {"boundary": self.kind, "python": self.python}
        if self.reason:
            out["reason"] = self.reason
        return out


def current() -> Boundary:
    """The boundary in force; raises :class:`SandboxUnavailable` where there is none."""
    found = _bubblewrap()
    if isinstance(found, Boundary):
        return found
    if _unsafe:
        return Boundary("unsafe", sys.executable, str(runtime_dir()), reason=found)
    raise SandboxUnavailable(REQUIREMENT.format(reason=found))


def require() -> Boundary:
    """:func:`current`, for commands that check before they start (same error)."""
    return current()


def describe() -> dict[str, str]:
    """The manifest entry of the boundary in force (``{"boundary": "none", ...}`` if none)."""
    try:
        return current().describe()
    except SandboxUnavailable as exc:
        return {"boundary": "none", "reason": str(exc)}


@functools.lru_cache(maxsize=1)
def _bubblewrap() -> Boundary | str:
    """The bubblewrap boundary, or the reason it cannot be used (checked once per process)."""
    if not sys.platform.startswith("linux"):
        return f"this is {sys.platform}, not Linux"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not on the PATH"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is needed to drop root for the sandbox"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is needed to limit the sandbox's resources"
    python = _sandbox_python()
    if python is None:
        return (
            "no Python interpreter readable by an unprivileged user (set TRAVELGYM_SANDBOX_PYTHON)"
        )
    try:
        mounts = tuple(_mounts(python))
        boundary = Boundary("bubblewrap", python, str(runtime_dir()), bwrap, mounts)
        with uid_slot() as uid, seccomp_filter() as filter_fd:
            program = [python, "-I", "-S", "-c", "print('ok')"]
            argv = command(boundary, uid, program, SandboxLimits(), seccomp_fd=filter_fd)
            probe = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                                   env=base_env(), pass_fds=[filter_fd] if filter_fd else [])  # fmt: skip
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return f"the sandbox could not be prepared ({exc})"
    if probe.returncode != 0 or probe.stdout.strip() != "ok":
        detail = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
        return f"bwrap failed to start a sandbox ({detail})"
    return boundary


def _world_readable(path: str) -> bool:
    """Whether an unprivileged user can reach and read ``path`` (and execute it)."""
    current_path = Path(path)
    try:
        if (current_path.stat().st_mode & 0o005) != 0o005:
            return False
        return all(p.stat().st_mode & 0o001 for p in current_path.parents)
    except OSError:
        return False


def _sandbox_python() -> str | None:
    """The interpreter of the sandbox: readable by the unprivileged sandbox user."""
    candidates = [os.environ.get("TRAVELGYM_SANDBOX_PYTHON"), sys.executable, "/usr/bin/python3"]
    for candidate in filter(None, candidates):
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and (os.geteuid() != 0 or _world_readable(real)):
            return real
    return None


def _libraries(files: list[str]) -> set[str]:
    """The shared libraries ``files`` load, as ``ldd`` finds them (none without ``ldd``)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return set()
    found: set[str] = set()
    for chunk in range(0, len(files), 32):
        out = subprocess.run([ldd, *files[chunk : chunk + 32]], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            path = line.split("=>")[-1].strip().split(" (")[0].strip()
            if path.startswith("/") and os.path.exists(path):
                found.add(path)
    return found


def _mounts(python: str) -> Iterator[str]:
    """bwrap arguments for the read-only file system: interpreter, stdlib, libraries, masks."""
    info = json.loads(_run([python, "-I", "-S", "-c", _PROBE]))
    stdlib = [p for p in info["path"] if os.path.isdir(p)]
    hidden = set(json.loads(_run([python, "-I", "-c", _SITE_PROBE])))
    hidden |= {str(Path(__file__).resolve().parents[1]), *_parent_site_dirs()}
    extensions = [
        f for d in stdlib for f in glob.glob(os.path.join(d, "**", "*.so"), recursive=True)
    ]
    libraries = _libraries([python, *extensions])
    if not libraries:  # no ldd: the system library directories whole
        libraries = {d for d in ("/lib", "/lib64", "/usr/lib", "/usr/lib64") if os.path.exists(d)}
    bound: list[str] = []
    for path in sorted({python, *libraries, *SYSTEM_FILES, *stdlib}):
        if os.path.exists(path):
            yield from ("--ro-bind", path, path)
            bound.append(path)
    empty = runtime_dir() / "empty"
    for secret in sorted(hidden):
        if os.path.isdir(secret) and any(_within(secret, b) for b in bound):
            yield from ("--ro-bind", str(empty), secret)


def _parent_site_dirs() -> set[str]:
    import site

    dirs = set(site.getsitepackages()) | {site.getusersitepackages()}
    return {os.path.realpath(d) for d in dirs}


def _within(path: str, parent: str) -> bool:
    path, parent = os.path.realpath(path), os.path.realpath(parent)
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout


@functools.lru_cache(maxsize=1)
def runtime_dir() -> Path:
    """A root-owned, world-readable copy of the runtime files (``inside/``), made once.

    The sandbox user could not read them inside a private checkout (``/root/...``); the copy
    lives in the system temp directory under a name derived from the files' content.
    """
    digest = hashlib.sha256()
    for name in RUNTIME_FILES:
        digest.update(name.encode() + b"\0" + (INSIDE / name).read_bytes())
    target = (
        Path(tempfile.gettempdir()) / f"travelgym-sandbox-{os.geteuid()}-{digest.hexdigest()[:16]}"
    )
    if _trusted(target):
        return target
    staging = Path(tempfile.mkdtemp(prefix="travelgym-sandbox-staging-"))
    for name in RUNTIME_FILES:
        shutil.copyfile(INSIDE / name, staging / name)
        (staging / name).chmod(0o644)
    (staging / "empty").mkdir(mode=0o555)
    _precompile(staging)
    staging.chmod(0o755)
    try:
        os.rename(staging, target)
    except OSError:  # another process made it first (or a stranger's directory is in the way)
        shutil.rmtree(staging, ignore_errors=True)
        if not _trusted(target):
            raise
    return target


def _precompile(directory: Path) -> None:
    """Bytecode for the imported runtime modules, made by the sandbox's own interpreter (the
    sandbox cannot write it, and compiling on every start would cost start-up time)."""
    python = _sandbox_python() or sys.executable
    modules = [str(directory / n) for n in RUNTIME_FILES if n != "boot.py"]
    script = "import py_compile, sys\nfor f in sys.argv[1:]: py_compile.compile(f, doraise=True)"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([python, "-I", "-S", "-c", script, *modules], timeout=60, check=True,
                       capture_output=True)  # fmt: skip
    for path in directory.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def _trusted(path: Path) -> bool:
    """An existing runtime directory owned by us and writable by no one else."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return path.is_dir() and info.st_uid == os.geteuid() and not info.st_mode & 0o022


@contextlib.contextmanager
def uid_slot() -> Iterator[int | None]:
    """A host user id of its own for one sandbox started by root (None when not root).

    ``RLIMIT_NPROC`` counts the processes of a real user id across the host, so concurrent
    sandboxes get distinct ids; ids above 2**30 belong to no account.
    """
    if os.geteuid() != 0:
        yield None
        return
    with _lock:
        slot = next(i for i in range(len(_slots) + 1) if i not in _slots)
        _slots.add(slot)
    try:
        yield UID_BASE + (os.getpid() % (1 << 20)) * 64 + slot % 64
    finally:
        with _lock:
            _slots.discard(slot)


@contextlib.contextmanager
def seccomp_filter() -> Iterator[int | None]:
    """A descriptor holding the sandbox's seccomp filter for one start (None where this machine
    has no filter table), closed afterwards."""
    fd = seccomp.filter_fd()
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def base_env() -> dict[str, str]:
    """The environment of the sandbox's launcher: nothing of the parent's (API keys!)."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def boot_program(boundary: Boundary, channel_fd: int) -> list[str]:
    """The interpreter command that runs ``boot.py`` talking on ``channel_fd``."""
    runtime = RUNTIME_MOUNT if boundary.kind == "bubblewrap" else boundary.runtime
    return [boundary.python, "-I", "-S", "-B", "-X", "utf8", f"{runtime}/boot.py", str(channel_fd)]


def command(boundary: Boundary, uid: int | None, program: list[str], limits: SandboxLimits,
            info_fd: int | None = None, seccomp_fd: int | None = None) -> list[str]:  # fmt: skip
    """The argv that runs ``program`` behind the boundary (as it is in unsafe mode).

    ``prlimit`` sets the resource limits before anything of the sandbox runs (the CPU limit
    counts the interpreter's start-up); ``setpriv`` then drops root for the sandbox's own user.
    """
    if boundary.kind != "bubblewrap":
        return list(program)
    assert boundary.bwrap is not None
    cpu = limits.cpu_seconds
    argv = ["prlimit", f"--cpu={cpu}:{cpu + 1}", f"--as={limits.memory_bytes}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}",
            f"--nproc={limits.processes}", "--core=0", "--"]  # fmt: skip
    if uid is not None:
        argv += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    # --as-pid-1: the interpreter is the namespace's init, so bwrap leaves no orphaned init
    # behind (an unreaped zombie would count against the sandbox user's process limit)
    argv += [boundary.bwrap, "--unshare-all", "--as-pid-1", "--die-with-parent", "--new-session",
             "--clearenv", "--hostname", "sandbox", *boundary.mounts,
             "--ro-bind", boundary.runtime, RUNTIME_MOUNT, "--proc", "/proc", "--dev", "/dev",
             "--size", str(limits.disk_bytes), "--tmpfs", WORKDIR,
             "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", WORKDIR]  # fmt: skip
    for key, value in {"HOME": WORKDIR, "TMPDIR": WORKDIR, "LANG": "C.UTF-8",
                       "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}.items():  # fmt: skip
        argv += ["--setenv", key, value]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:  # see travelgym.sandbox.seccomp: memory no rlimit counts
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, *program]
