"""The code a benchmark compares against, measured in the same run: a git revision of this
repository exported (``git archive``) into a temporary directory, whose ``src`` goes first on
``PYTHONPATH`` of the child processes that time it.

    from reference import reference_src, env_for
    src = reference_src("5eabf09")          # -> Path(".../src"), cached per revision
    subprocess.run([...], env=env_for(src))  # the child imports travelgym from that revision

The benchmarks that report a before/after ratio take ``--reference REV`` (default
:data:`BEFORE_ISSUE_31`, the last commit before the speed work of issue 31).
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE_ISSUE_31 = "5eabf09"


def reference_src(rev: str = BEFORE_ISSUE_31) -> Path:
    """The ``src`` directory of revision ``rev`` exported under the temporary directory (made
    once per revision and kept for later runs)."""
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    where = Path(tempfile.gettempdir()) / f"travelgym-reference-{full[:12]}"
    src = where / "src"
    if (where / ".complete").exists():
        return src
    where.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", full],
                             check=True, capture_output=True).stdout  # fmt: skip
    tar = where / "rev.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as fh:
        fh.extractall(where, filter="data")
    tar.unlink()
    (where / ".complete").write_text(full + "\n")
    return src


def env_for(src: Path | None) -> dict[str, str]:
    """The environment of a child that imports travelgym from ``src`` (this checkout's when
    None), with progress bars off."""
    env = dict(os.environ, TRAVELGYM_NO_PROGRESS="1")
    chosen = src if src is not None else ROOT / "src"
    env["PYTHONPATH"] = os.pathsep.join([str(chosen), *filter(None, [env.get("PYTHONPATH")])])
    return env


def timed_child(cmd: list[str], env: dict[str, str], log: Path) -> dict[str, float]:
    """Run ``cmd`` with its output in ``log``; its wall seconds, CPU seconds (it and the
    processes it waited for) and peak RSS in MiB, from ``os.wait4``. Raises RuntimeError with
    the log's end when it fails."""
    import time

    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])} ... failed:\n{log.read_text()[-4000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024}  # fmt: skip
