"""Child side of a sandbox run: set up, apply limits, install the audit hook, run the code.

Runs in a fresh ``python -I`` process started by :func:`travelgym.sandbox.run_code`; never import
it in the parent. Everything that needs privileges the code will not have (reading the job,
opening the status file and the read-only database) happens before the hook is installed.
"""

from __future__ import annotations

import builtins
import json
import linecache
import math
import os
import resource
import signal
import subprocess  # noqa: F401 - loaded before the hook, so only starting a process is refused
import sys
import time
import traceback
from typing import Any

from travelgym.sandbox import guard

FILENAME = "<code>"
PARACHUTE_BYTES = 4 << 20  # freed on MemoryError so the report can still be written
_OWN_FILES = frozenset({__file__, guard.__file__})


def _set_limits(limits: dict[str, Any]) -> None:
    cpu = math.ceil(time.process_time() + limits["cpu_seconds"])
    for which, value in (
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_AS, (limits["memory_bytes"],) * 2),
        (resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2),
        (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
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


def _format(exc: BaseException, limit: int) -> str:
    """The traceback as Python prints it, without the sandbox's own frames."""
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
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    parachute = [bytearray(PARACHUTE_BYTES)]
    try:
        exec(compile(source, FILENAME, "exec"), namespace)  # noqa: S102 - the sandbox's purpose
    except SystemExit as exc:
        if exc.code in (None, 0):
            return "ok", None
        return "exception", _format(exc, limit)
    except MemoryError as exc:
        parachute.clear()
        namespace.clear()
        traceback.clear_frames(exc.__traceback__)
        return "memory", _format(exc, limit)
    except BaseException as exc:  # noqa: BLE001 - every failure of the code is reported
        return ("refused" if _violation(exc) else "exception"), _format(exc, limit)
    return "ok", None


def main(job_path: str) -> None:
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    status = open(job["status_path"], "w", encoding="utf-8")  # noqa: SIM115 - kept open
    sys.dont_write_bytecode = True
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    tools = job.get("tools")
    if tools:
        from travelgym.sandbox.bindings import install_tools

        install_tools(tools["suite"], tools["db_path"], job["workdir"], tools["module"])
    refusals: list[str] = []
    policy = guard.Policy(job["workdir"], tuple(job.get("protected", ())))
    _set_limits(job["limits"])
    guard.install(policy, refusals)
    outcome, trace = run_source(job["source"], job["limits"]["output_chars"])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    json.dump({"outcome": outcome, "traceback": trace, "refusals": refusals}, status)
    status.close()
    os._exit(0)  # skip atexit handlers and threads the code may have left behind
