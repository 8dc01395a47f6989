"""Parent side: start the sandbox, serve its tool calls, enforce the wall clock, collect the result."""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from travelgym.sandbox import boundary as boundaries
from travelgym.sandbox.bridge import ToolBridge
from travelgym.sandbox.config import SandboxError, SandboxLimits, SandboxResult
from travelgym.sandbox.inside import channel
from travelgym.sandbox.inside import workspace as archives
from travelgym.sandbox.storage import MARKER, StoreBudget

_MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "out of memory", "bad_alloc")
_OUTCOMES = {
    "ok": None,
    "exception": SandboxError.EXCEPTION,
    "refused": SandboxError.REFUSED,
    "memory": SandboxError.MEMORY,
}
MAX_REQUEST_BYTES = 1 << 20
EXIT_GRACE_S = 1.0  # after the sandbox exits, how long its last frames may take to arrive
NO_TOOLS = marshal.dumps({"payload": {"error": {"category": "tool_name",
                          "message": "no tools in this sandbox"}}})  # fmt: skip


class Workspace:
    """The files of one episode's sandbox calls, kept between calls as an opaque archive.

    The parent never unpacks it on its own file system (except :meth:`files`, for tests and
    inspection, into a private temporary directory).
    """

    def __init__(self) -> None:
        self.archive = b""
        self.store = StoreBudget()  # the bytes the episode's calls may still have recorded

    def files(self) -> dict[str, bytes]:
        """The regular files of the workspace by relative path."""
        with tempfile.TemporaryDirectory() as tmp:
            archives.unpack(self.archive, tmp)
            return {str(p.relative_to(tmp)): p.read_bytes()
                    for p in sorted(Path(tmp).rglob("*")) if p.is_file()}  # fmt: skip


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
            text = text[:chars]
            cut = max(0, self.total - len(text.encode("utf-8", "surrogatepass")))
            text += "\n" + MARKER.format(cut)
        return text, truncated


class _Session:
    """One sandbox process and its channel: send the job, answer calls, take the report."""

    def __init__(self, proc: subprocess.Popen, sock: socket.socket, tools: ToolBridge | None,
                 limits: SandboxLimits) -> None:  # fmt: skip
        self.proc, self.sock, self.tools, self.limits = proc, sock, tools, limits
        self.report: dict[str, Any] | None = None
        self.archive: bytes | None = None
        self.timed_out = False
        self.closed_early = False  # the code's end of the channel closed with replies unsent
        self.protocol_error: str | None = None

    def serve(self, first: bytes, deadline: float) -> None:
        outgoing = bytearray(first)
        reader = channel.FrameReader({channel.CALL: MAX_REQUEST_BYTES, channel.STATUS: 8 << 20,
                                      channel.ARCHIVE: self.limits.disk_bytes + (16 << 20)})  # fmt: skip
        self.sock.setblocking(False)
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                self.timed_out = True
                return
            if exited_at is None and _exited(self.proc.pid):
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                return
            wait = min(deadline - now, 0.05)
            readable, writable, _ = select.select(
                [self.sock], [self.sock] if outgoing else [], [], wait
            )
            if writable:
                try:
                    del outgoing[: self.sock.send(outgoing[: 1 << 16])]
                except BlockingIOError:
                    pass
                except OSError:  # the code exited (or closed its end) with replies queued
                    outgoing.clear()
                    self.closed_early = True
            if not readable:
                continue
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                return
            if not data:  # every process of the sandbox is gone, or going
                until = time.monotonic() + EXIT_GRACE_S
                while not _exited(self.proc.pid) and time.monotonic() < until:
                    time.sleep(0.001)
                return
            try:
                frames = reader.feed(data)
            except channel.ChannelError as exc:
                self.protocol_error = str(exc)
                return
            for kind, payload in frames:
                # each call is checked against the deadline: a batch of pipelined calls is
                # not answered past it
                if kind == channel.CALL and time.monotonic() >= deadline:
                    self.timed_out = True
                    return
                outgoing += self._answer(kind, payload)

    def _answer(self, kind: bytes, payload: bytes) -> bytes:
        if kind == channel.CALL:
            reply = (
                NO_TOOLS
                if self.tools is None
                else self.tools.handle(payload, self.limits.tool_calls)
            )
            return channel.pack(channel.REPLY, reply)
        if kind == channel.STATUS and self.report is None:
            with contextlib.suppress(ValueError, RecursionError):
                report = json.loads(payload)
                self.report = report if isinstance(report, dict) else None
        elif kind == channel.ARCHIVE and self.archive is None:
            self.archive = payload
        return b""


def _exited(pid: int) -> bool:
    """Whether the child has exited (without reaping it)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _namespace_init(info_fd: int | None) -> int | None:
    """The host pid of the sandbox's PID-namespace init, from bwrap's ``--info-fd``."""
    if info_fd is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        if select.select([info_fd], [], [], 0)[0]:
            pid = json.loads(os.read(info_fd, 4096).decode()).get("child-pid")
            return pid if isinstance(pid, int) and pid > 1 else None
    return None


def _stop(proc: subprocess.Popen, init_pid: int | None) -> tuple[int, float]:
    """Kill everything the call started; return (exit status, CPU seconds of the process tree).

    Killing the namespace's init makes the kernel kill and reap every process in it; bwrap,
    its parent, then reaps it and exits, so nothing is left as an orphan (an orphan's zombie
    would still count against the sandbox user's process limit). The process group kill is
    the fallback, and all there is in unsafe mode."""
    if init_pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(init_pid, signal.SIGKILL)
        until = time.monotonic() + 2.0
        while not _exited(proc.pid) and time.monotonic() < until:
            time.sleep(0.001)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the leader is not reaped yet: the group is ours
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def _classify(rc: int, timed_out: bool, cpu: float, limits: SandboxLimits,
              report: dict | None, err: str) -> SandboxError | None:  # fmt: skip
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


def run_code(
    source: str,
    *,
    tools: ToolBridge | None = None,
    limits: SandboxLimits = SandboxLimits(),
    workspace: Workspace | None = None,
    audit: bool = True,
) -> SandboxResult:
    """Run model-written ``source`` behind the operating-system boundary.

    ``tools`` serves ``import tools`` inside (each call recorded by the bridge's recorder);
    ``workspace`` keeps the working directory's files from one call to the next (reuse one per
    episode). ``audit=False`` leaves out the in-process audit hook, to test the boundary alone.
    Raises :class:`~travelgym.sandbox.SandboxUnavailable` where there is no boundary.
    """
    boundary = boundaries.current()
    workspace = workspace if workspace is not None else Workspace()
    workspace.store.per_value, workspace.store.per_episode = (
        limits.result_bytes,
        limits.stored_bytes,
    )
    if tools is not None:
        tools.store = workspace.store
    host_dir = None if boundary.kind == "bubblewrap" else tempfile.mkdtemp(prefix="travelgym-work-")
    job = {"source": source, "workdir": boundary.workdir or host_dir, "limits": asdict(limits),
           "tools": tools.specs() if tools else None, "module": tools.module if tools else "tools",
           "audit": audit, "set_limits": boundary.kind != "bubblewrap"}  # fmt: skip
    first = channel.pack(channel.JOB, marshal.dumps(job))
    first += channel.pack(channel.ARCHIVE, workspace.archive)
    parent_sock, child_sock = socket.socketpair()
    info_r, info_w = os.pipe() if boundary.kind == "bubblewrap" else (None, None)
    keep = limits.output_chars * 4 + 4
    try:
        with boundaries.uid_slot() as uid, contextlib.ExitStack() as stack:
            filter_fd = (stack.enter_context(boundaries.seccomp_filter())
                         if boundary.kind == "bubblewrap" else None)  # fmt: skip
            program = boundaries.boot_program(boundary, child_sock.fileno())
            argv = boundaries.command(boundary, uid, program, limits, info_w, filter_fd)
            start = time.monotonic()
            try:
                fds = (child_sock.fileno(), info_w, filter_fd)
                proc = subprocess.Popen(argv, cwd=host_dir or "/", env=boundaries.base_env(),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, start_new_session=True,
                                        pass_fds=[fd for fd in fds if fd is not None])  # fmt: skip
            finally:
                child_sock.close()
                if info_w is not None:
                    os.close(info_w)
            out, err = _Capture(proc.stdout, keep), _Capture(proc.stderr, keep)
            out.start()
            err.start()
            session = _Session(proc, parent_sock, tools, limits)
            try:
                session.serve(first, start + limits.wall_seconds)
            finally:
                rc, tree_cpu = _stop(proc, _namespace_init(info_r))
                wall = time.monotonic() - start
                for capture in (out, err):
                    capture.join(timeout=5)
                proc.stdout.close()
                proc.stderr.close()
    finally:
        parent_sock.close()
        if info_r is not None:
            os.close(info_r)
        if host_dir is not None:
            shutil.rmtree(host_dir, ignore_errors=True)
    if boundary.kind == "bubblewrap" and rc > 128:
        rc = -(rc - 128)  # bwrap exits with 128 + N when the code was killed by signal N
    report = session.report
    cpu = max(tree_cpu, float((report or {}).get("cpu_seconds") or 0))
    stdout, stdout_cut = out.text(limits.output_chars)
    stderr, stderr_cut = err.text(limits.output_chars)
    if session.protocol_error:
        stderr += f"\n[sandbox channel: {session.protocol_error}]"
    if session.closed_early:
        stderr += "\n[sandbox channel: the code closed the channel with tool replies unsent]"
    error = _classify(rc, session.timed_out, cpu, limits, report, stderr)
    saved = session.archive is not None and not session.timed_out
    if saved:
        workspace.archive = session.archive
    refusals = (report or {}).get("refusals", ())
    return SandboxResult(
        ok=error is None,
        stdout=stdout,
        stderr=stderr,
        exit_status=rc,
        error=error,
        traceback=(report or {}).get("traceback"),
        wall_seconds=round(wall, 3),
        cpu_seconds=round(cpu, 3),
        refusals=tuple(str(r) for r in refusals) if isinstance(refusals, list) else (),
        stdout_truncated=stdout_cut,
        stderr_truncated=stderr_cut,
        pid=proc.pid,
        tool_calls=tools.calls if tools else 0,
        boundary=boundary.kind,
        workspace_saved=saved,
    )
