"""Inside the sandbox: receive the job, restore the working directory, set limits, install the
audit hook, run the model's code, then report and pack the working directory.

Started as ``python -I -S -B boot.py FD`` where FD is the channel socket; the operating-system
boundary (namespaces, read-only file system, unprivileged user) is already in place. The
limits and the audit hook are a second layer inside it.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import resource
import signal
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: start-up skips importing typing
    from typing import Any

RUNTIME = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, RUNTIME)
import channel  # noqa: E402
import guard  # noqa: E402
import workspace  # noqa: E402

del sys.path[0]  # the code may import the runtime by file path only, not by accident
FILENAME = "<code>"
PARACHUTE_BYTES = 4 << 20  # freed on MemoryError so the report can still be written
MAX_JOB_BYTES = 16 << 20
_OWN_FILES = frozenset(m.__file__ for m in (sys.modules[__name__], channel, guard))


def _set_limits(limits: dict[str, Any]) -> None:
    cpu = math.ceil(time.process_time() + limits["cpu_seconds"])
    for which, value in (
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (limits["memory_bytes"],) * 2),
        (resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2),
        (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
        (resource.RLIMIT_NPROC, (limits["processes"],) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ):
        resource.setrlimit(which, value)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes raise OSError instead
    signal.alarm(math.ceil(limits["wall_seconds"]) + 5)  # in case the parent is gone


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
    usage = resource.getrusage(resource.RUSAGE_SELF)
    report["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    channel.write_frame(fd, channel.STATUS, json.dumps(report).encode("ascii"))
    if archive is not None:
        channel.write_frame(fd, channel.ARCHIVE, archive)


def main() -> None:
    fd = int(sys.argv[1])
    job = json.loads(channel.read_frame(fd, channel.JOB, MAX_JOB_BYTES))
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
    _set_limits(limits)
    if job.get("audit", True):
        guard.install(guard.Policy(job["workdir"]), refusals)
    outcome, trace = run_source(job["source"], limits["output_chars"])
    _finish(fd, job, {"outcome": outcome, "traceback": trace, "refusals": refusals})
    os._exit(0)  # skip atexit handlers and threads the code may have left behind


if __name__ == "__main__":
    main()
