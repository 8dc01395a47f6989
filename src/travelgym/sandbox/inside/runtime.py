"""Inside the sandbox: receive the job, restore the working directory, install the audit
hook, run the model's code, then report and pack the working directory.

Imported by ``boot.py`` (``python -I -S -B boot.py FD``, FD the channel socket) once the
operating-system boundary (namespaces, read-only file system, unprivileged user, resource
limits set by ``prlimit``) is in place; the audit hook is a second layer inside it. Start-up
time matters (every call starts a sandbox), so nothing slow is imported: the job arrives as
``marshal`` data from the trusted parent, and reports go back as JSON without the json module.
"""

from __future__ import annotations

import _signal
import builtins
import marshal
import os
import sys
import time

import channel
import guard
import workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs start-up time
    from typing import Any

RUNTIME = os.path.dirname(os.path.abspath(__file__))
FILENAME = "<code>"
PARACHUTE_BYTES = 4 << 20  # freed on MemoryError so the report can still be written
MAX_JOB_BYTES = 16 << 20
_OWN_FILES = frozenset([*(m.__file__ for m in (sys.modules[__name__], channel, guard)),
                        os.path.join(RUNTIME, "boot.py")])  # fmt: skip


def _set_limits(limits: dict[str, Any]) -> None:
    """Resource limits from inside: only where no ``prlimit`` set them (unsafe mode)."""
    import resource

    cpu = int(time.process_time() + limits["cpu_seconds"]) + 1
    for which, value in (
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (limits["memory_bytes"],) * 2),
        (resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2),
        (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
        (resource.RLIMIT_NPROC, (limits["processes"],) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ):
        resource.setrlimit(which, value)


def _violation(exc: BaseException | None) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (guard.SandboxViolation, guard.RefusedImport)):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _format(exc: BaseException, source: str, limit: int) -> str:
    """The traceback as Python prints it, without the sandbox's own frames."""
    import linecache
    import traceback

    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)

    report = traceback.TracebackException.from_exception(exc)
    pending, seen = [report], set()
    while pending:
        item = pending.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        frames = [f for f in item.stack if f.filename not in _OWN_FILES]
        item.stack = traceback.StackSummary.from_list(frames)
        pending += [item.__cause__, item.__context__]
    text = "".join(report.format())
    return text if len(text) <= limit else "...\n" + text[-limit:]


def run_source(source: str, limit: int) -> tuple[str, str | None]:
    """Run ``source`` as ``__main__``; (outcome, traceback): ok, exception, refused, memory."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    parachute = [bytearray(PARACHUTE_BYTES)]
    try:
        exec(compile(source, FILENAME, "exec"), namespace)  # noqa: S102 - the sandbox's purpose
    except SystemExit as exc:
        if exc.code in (None, 0):
            return "ok", None
        return "exception", _format(exc, source, limit)
    except MemoryError as exc:
        parachute.clear()
        namespace.clear()
        import traceback

        traceback.clear_frames(exc.__traceback__)
        return "memory", _format(exc, source, limit)
    except BaseException as exc:  # noqa: BLE001 - every failure of the code is reported
        return ("refused" if _violation(exc) else "exception"), _format(exc, source, limit)
    return "ok", None


def _finish(fd: int, job: dict[str, Any], report: dict[str, Any]) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    try:
        archive = workspace.pack(job["workdir"], job["limits"]["disk_bytes"])
    except (OSError, ValueError, MemoryError) as exc:
        archive, report["workspace_error"] = None, str(exc)[:500]
    report["cpu_seconds"] = time.process_time()
    channel.write_frame(fd, channel.STATUS, channel.encode_json(report))
    if archive is not None:
        channel.write_frame(fd, channel.ARCHIVE, archive)


def main(fd: int) -> None:
    """Run the job that arrives on the channel ``fd``; never returns."""
    job = marshal.loads(channel.read_frame(fd, channel.JOB, MAX_JOB_BYTES))
    limits = job["limits"]
    archive = channel.read_frame(fd, channel.ARCHIVE, limits["disk_bytes"] + (16 << 20))
    os.chdir(job["workdir"])
    workspace.unpack(archive, job["workdir"])
    del archive
    sys.dont_write_bytecode = True
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    if job.get("tools") is not None:
        sys.path.insert(0, RUNTIME)
        import stubs  # only with tools: it imports inspect, a slow start-up

        del sys.path[0]
        module = job.get("module", "tools")
        sys.modules[module] = stubs.build_module(job["tools"], stubs.channel_forward(fd), module)
    refusals: list[str] = []
    if job.get("set_limits"):
        _set_limits(limits)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)  # oversized writes raise OSError instead
    _signal.alarm(int(limits["wall_seconds"]) + 6)  # in case the parent is gone
    if job.get("audit", True):
        guard.install(guard.Policy(job["workdir"]), refusals)
    outcome, trace = run_source(job["source"], limits["output_chars"])
    _finish(fd, job, {"outcome": outcome, "traceback": trace, "refusals": refusals})
    os._exit(0)  # skip atexit handlers and threads the code may have left behind
