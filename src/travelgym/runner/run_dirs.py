"""Where a run goes when no ``--out`` is given, and the runs found under a directory.

A default run directory is ``runs/<suite>/<UTC start>-<agent>-<identity hash>/``: the start
time keeps two runs apart, and the hash of the run's identity (:func:`run_identity`, what
``--resume`` compares) tells the runs of one command from the others at a glance. ``--resume``
without ``--out`` continues the latest directory there whose manifest has this command's
identity (:func:`resumable_runs`); ``travelgym runs`` lists them (:func:`list_runs`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from travelgym.runner.errors import RunDirError
from travelgym.runner.store import (
    EPISODES,
    IDENTITY_DEFAULTS,
    IDENTITY_KEYS,
    MANIFEST,
    read_manifest,
    read_run,
)

HASH_CHARS = 8  # of the identity's sha256: a few runs of a suite never share it by chance
AGENT_CHARS = 60  # of the agent's part of a name (a checkpoint path can be long)
STAMP = "%Y%m%dT%H%M%SZ"


def run_identity(
    manifest: dict[str, Any], identity: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What makes the run of ``manifest`` the run it is (two runs of equal identities are one
    run to ``--resume``): its :data:`~travelgym.runner.store.IDENTITY_KEYS` and the suite's own
    keys ``identity`` (key -> the value a manifest without the key stands for), as
    :meth:`~travelgym.runner.store.RunStore.open` compares them."""
    found = {k: manifest.get(k, IDENTITY_DEFAULTS.get(k)) for k in IDENTITY_KEYS}
    found.update({k: manifest.get(k, was) for k, was in (identity or {}).items()})
    return found


def identity_hash(manifest: dict[str, Any], identity: dict[str, Any] | None = None) -> str:
    """The short hash of the run identity of ``manifest`` (``identity``: the suite's own keys,
    as :func:`run_identity` takes them)."""
    text = json.dumps(run_identity(manifest, identity), sort_keys=True, separators=(",", ":"),
                      default=str)  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARS]


def safe_name(text: str) -> str:
    """``text`` as one portable file name part: ``:`` as ``-``, every other character outside
    letters, digits, ``.``, ``_`` and ``-`` as ``_``, cut to :data:`AGENT_CHARS`."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", text.replace(":", "-"))[:AGENT_CHARS].lstrip(".")
    return name or "agent"


def new_run_dir(parent: Path, agent: str, manifest: dict[str, Any],
                identity: dict[str, Any] | None = None,
                started: dt.datetime | None = None) -> Path:  # fmt: skip
    """A run directory under ``parent`` that does not exist yet, named
    ``<UTC start>-<agent>-<identity hash>`` (``-2``, ``-3``... added should one of that name
    exist: two runs started in the same second)."""
    when = (started or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    base = f"{when.strftime(STAMP)}-{safe_name(agent)}-{identity_hash(manifest, identity)}"
    directory, n = Path(parent) / base, 1
    while directory.exists():
        n += 1
        directory = Path(parent) / f"{base}-{n}"
    return directory


def resumable_runs(parent: Path, manifest: dict[str, Any],
                   identity: dict[str, Any] | None = None) -> list[Path]:  # fmt: skip
    """The run directories directly under ``parent`` whose manifest has the run identity of
    ``manifest``, latest first (by the time the run was created; unreadable manifests skipped:
    they match nothing)."""
    want = run_identity(manifest, identity)
    found = []
    for directory in _children(Path(parent)):
        try:
            old = read_manifest(directory)
        except RunDirError:
            continue
        if old and run_identity(old, identity) == want:
            found.append((str(old.get("created", "")), directory.name, directory))
    return [d for *_, d in sorted(found, key=lambda f: (f[0], f[1]), reverse=True)]


def place_run(parent: Path, agent: str, manifest: dict[str, Any], identity: dict[str, Any],
              resume: bool, started: dt.datetime | None = None) -> tuple[Path, str | None]:  # fmt: skip
    """The run directory of a run under ``parent`` when no ``--out`` names it, and a line
    saying which was chosen (``None`` for a new one): with ``resume`` the latest of the same
    identity (:class:`RunDirError` when there is none), else a new one."""
    if not resume:
        return new_run_dir(parent, agent, manifest, identity, started), None
    found = resumable_runs(parent, manifest, identity)
    if not found:
        raise RunDirError(f"no run under {parent} has this command's identity (agent, tasks, "
                          "seeds, settings) to resume: start it without --resume, or name its "
                          "directory's parent with --out")  # fmt: skip
    others = f" (the latest of {len(found)} such runs)" if len(found) > 1 else ""
    return found[0], f"resuming {found[0]}{others}"


@dataclass
class RunRow:
    """One run directory as ``travelgym runs`` lists it."""

    suite: str
    directory: str
    agent: str
    episodes: int  # every episode saved (``n`` of the outcome table)
    success_pct: float | None  # the suite's success criterion over the counted episodes
    infra_errors: int
    cost_usd: float | None
    created: str | None
    metrics: dict[str, float] = field(default_factory=dict)  # the suite's headline figures

    def as_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return asdict(self)


def list_runs(root: Path, suite: str | None = None) -> tuple[list[RunRow], list[str]]:
    """The runs under ``root`` of ``suite`` if given, newest first, and a note for every
    directory skipped (not a run, damaged, of a suite not installed); never raises on what it
    finds. Runs are the directories with a ``manifest.json`` at and two levels under ``root``
    (``runs/``, ``runs/<suite>`` or any ``--out`` directory); with ``suite``, those under
    ``root/<suite>`` when it exists."""
    from travelgym.core.registry import suite_names

    root, others = Path(root), set()
    if suite is not None and (root / suite).is_dir():
        root = root / suite
    elif suite is not None:  # the other suites' directories hold none of its runs
        others = set(suite_names()) - {suite}
    rows, notes = [], []
    for directory in _candidates(root, notes, others):
        try:
            row = _row(directory)
        except Exception as exc:  # noqa: BLE001 - a listing reports a broken run, never stops on it
            notes.append(f"skipped {directory}: {_reason(exc)}")
            continue
        if suite is None or row.suite == suite:
            rows.append(row)
    rows.sort(key=lambda r: (r.created or "", r.directory), reverse=True)
    return rows, notes


def _candidates(root: Path, notes: list[str], skip: set[str]) -> list[Path]:
    """The directories with a manifest at and two levels under ``root`` (but under its
    sub-directories named in ``skip``); a directory there without one is noted when it holds
    files but no run (an empty one or a parent of runs is not)."""
    if (root / MANIFEST).is_file():
        return [root]
    found = []
    for child in _children(root):
        if child.name in skip:
            continue
        if (child / MANIFEST).is_file():
            found.append(child)
            continue
        inner = _children(child)
        runs = [d for d in inner if (d / MANIFEST).is_file()]
        found += runs
        if runs:
            notes += [f"skipped {d}: not a run directory (no {MANIFEST})"
                      for d in inner if d not in runs]  # fmt: skip
        elif not inner and _has_files(child):
            notes.append(f"skipped {child}: not a run directory (no {MANIFEST})")
        else:
            notes += [f"skipped {d}: not a run directory (no {MANIFEST})" for d in inner]
    return found


def _has_files(directory: Path) -> bool:
    """Whether ``directory`` holds anything (``False`` when it cannot be read)."""
    try:
        return any(True for _ in directory.iterdir())
    except OSError:
        return False


def _children(directory: Path) -> list[Path]:
    """The sub-directories of ``directory`` (hidden ones and links left out; none when it
    cannot be read)."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [e for e in entries if not e.name.startswith(".") and not e.is_symlink() and e.is_dir()]


def _row(directory: Path) -> RunRow:
    """The listing row of the run directory ``directory`` (errors: it is damaged or foreign)."""
    from travelgym.core.registry import get_suite, suite_names
    from travelgym.core.summary import counted_episodes, summarize_episodes

    manifest = read_manifest(directory)
    name = manifest.get("suite")
    if name not in suite_names():
        raise RunDirError(f"its manifest names no installed suite ({name!r})")
    suite = get_suite(name)
    episodes = (read_run(directory, name, as_dicts=True).episodes
                if (directory / EPISODES).exists() else [])  # fmt: skip
    summary = summarize_episodes(suite, episodes, manifest)
    counted = counted_episodes(episodes, manifest)
    success = (round(100 * sum(map(suite.succeeded, counted)) / len(counted), 1)
               if counted else None)  # fmt: skip
    cost = (summary.get("usage") or {}).get("cost_usd")
    return RunRow(suite=name, directory=str(directory), agent=str(manifest.get("agent", "?")),
                  episodes=(summary.get("outcomes") or {}).get("n", len(episodes)),
                  success_pct=success,
                  infra_errors=(summary.get("outcomes") or {}).get("infra_errors", 0),
                  cost_usd=cost.get("total") if isinstance(cost, dict) else None,
                  created=manifest.get("created"),
                  metrics=suite.headline_metrics(summary) if counted else {})  # fmt: skip


def _reason(exc: Exception) -> str:
    """One line of why a directory could not be read."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if isinstance(exc, RunDirError) else f"{type(exc).__name__}: {text}"
