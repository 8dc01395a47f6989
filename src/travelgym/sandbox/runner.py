"""Parent side: start the child interpreter, enforce the wall clock, collect the result."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

import travelgym
from travelgym.sandbox.config import SandboxError, SandboxLimits, SandboxResult, ToolsSpec

_SRC_ROOT = str(Path(travelgym.__file__).resolve().parent.parent)
_BOOT = (
    f"import sys; sys.path.insert(0, {_SRC_ROOT!r}); "
    "from travelgym.sandbox.child import main; main(sys.argv[1])"
)
_MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "out of memory", "bad_alloc")
_OUTCOMES = {
    "ok": None,
    "exception": SandboxError.EXCEPTION,
    "refused": SandboxError.REFUSED,
    "memory": SandboxError.MEMORY,
}


class _Capture(threading.Thread):
    """Drains a pipe, keeping at most ``keep`` bytes so a flood cannot exhaust memory."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep, self.data, self.total = pipe, keep, bytearray(), 0

    def run(self) -> None:
        fd = self.pipe.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.total += len(chunk)
            if len(self.data) < self.keep:
                self.data += chunk[: self.keep - len(self.data)]

    def text(self, chars: int) -> tuple[str, bool]:
        text = self.data.decode("utf-8", errors="replace")
        truncated = self.total > len(self.data) or len(text) > chars
        if truncated:
            text = text[:chars] + f"\n[... output truncated after {chars} characters]"
        return text, truncated


def _child_env(workdir: Path) -> dict[str, str]:
    """A minimal environment: nothing of the parent's (API keys!) leaks into the child."""
    env = {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env |= {key: str(workdir) for key in ("HOME", "TMPDIR", "MPLCONFIGDIR")}
    env |= {key: "1" for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    return env


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _wait(pid: int, deadline: float) -> bool:
    """Wait until the child exits (without reaping it) or the deadline; True on timeout."""
    delay = 0.002
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() >= deadline:
            return True
        time.sleep(delay)
        delay = min(delay * 1.5, 0.05)
    return False


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def _classify(
    rc: int, timed_out: bool, cpu: float, limits: SandboxLimits, report: dict | None, err: str
) -> SandboxError | None:
    if rc == -signal.SIGXCPU:
        return SandboxError.CPU_LIMIT
    if timed_out:
        return SandboxError.TIMEOUT
    if rc == -signal.SIGKILL and cpu >= limits.cpu_seconds:
        return SandboxError.CPU_LIMIT  # the hard limit, one second after an ignored SIGXCPU
    if report is not None and report.get("outcome") in _OUTCOMES:
        return _OUTCOMES[report["outcome"]]
    if rc == 0:
        return None  # the code left early through os._exit(0)
    if rc == -signal.SIGKILL or any(hint in err for hint in _MEMORY_HINTS):
        return SandboxError.MEMORY
    return SandboxError.CRASH


def _execute(job: dict[str, Any], workdir: Path, limits: SandboxLimits) -> SandboxResult:
    job_path = Path(job["status_path"]).with_name("job.json")
    job_path.write_text(json.dumps(job), encoding="utf-8")
    command = [sys.executable, "-I", "-B", "-X", "utf8", "-c", _BOOT, str(job_path)]
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=workdir,
        env=_child_env(workdir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own session and process group (pgid == pid)
        close_fds=True,
    )
    keep = limits.output_chars * 4 + 4
    out, err = _Capture(proc.stdout, keep), _Capture(proc.stderr, keep)
    out.start()
    err.start()
    try:
        timed_out = _wait(proc.pid, start + limits.wall_seconds)
    finally:
        _killpg(proc.pid)  # the exited leader is not reaped yet, so the group id is still ours
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        for capture in (out, err):
            capture.join(timeout=5)
        proc.stdout.close()
        proc.stderr.close()
    cpu = usage.ru_utime + usage.ru_stime
    stdout, stdout_cut = out.text(limits.output_chars)
    stderr, stderr_cut = err.text(limits.output_chars)
    report = _read_report(Path(job["status_path"]))
    error = _classify(proc.returncode, timed_out, cpu, limits, report, stderr)
    return SandboxResult(
        ok=error is None,
        stdout=stdout,
        stderr=stderr,
        exit_status=proc.returncode,
        error=error,
        traceback=(report or {}).get("traceback"),
        wall_seconds=round(wall, 3),
        cpu_seconds=round(cpu, 3),
        refusals=tuple((report or {}).get("refusals", ())),
        stdout_truncated=stdout_cut,
        stderr_truncated=stderr_cut,
        pid=proc.pid,
    )


def run_code(
    source: str,
    *,
    tools_spec: ToolsSpec | None = None,
    limits: SandboxLimits = SandboxLimits(),
    workdir: Path | None = None,
) -> SandboxResult:
    """Run model-written ``source`` in a fresh, limited and audited Python process.

    ``workdir`` is the only place the code may write; without one, a temporary directory is
    created and removed. Reuse one ``workdir`` across the runs of an episode to keep its files
    and the tools' notebook.
    """
    control = Path(tempfile.mkdtemp(prefix="travelgym-sandbox-"))
    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="travelgym-work-")) if own else Path(workdir)
    try:
        work.mkdir(parents=True, exist_ok=True)
        work = work.resolve()
        job: dict[str, Any] = {
            "source": source,
            "workdir": str(work),
            "status_path": str(control / "status.json"),
            "limits": asdict(limits),
            "protected": [],
            "tools": None,
        }
        if tools_spec is not None:
            db = Path(tools_spec.db_path).resolve()
            job["tools"] = {
                "suite": tools_spec.suite,
                "db_path": str(db),
                "module": tools_spec.module,
            }
            job["protected"] = [str(db) + suffix for suffix in ("", "-journal", "-wal", "-shm")]
        return _execute(job, work, limits)
    finally:
        shutil.rmtree(control, ignore_errors=True)
        if own:
            shutil.rmtree(work, ignore_errors=True)
