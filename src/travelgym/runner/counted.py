"""How much of a run directory its metrics count: a note for an unfinished run (episodes
missing, a torn last line left out) and the episodes that count (infra errors left out unless
the run counts them as failures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.runner.store import RunContents, read_run


def missing_note(run: RunContents) -> str | None:
    """A line saying how incomplete a run is (episodes missing from the manifest's task_ids x
    trials, a torn last line left out), or ``None`` for a complete run."""
    task_ids, trials = run.manifest.get("task_ids"), run.manifest.get("trials", 1)
    parts = []
    if isinstance(task_ids, list) and isinstance(trials, int):
        wanted = {(t, k) for t in task_ids for k in range(trials)}
        missing = len(wanted - set(run.keys))
        if missing:
            parts.append(f"{missing} of {len(wanted)} episode(s) missing")
    if run.torn is not None:
        parts.append(f"a torn last line (line {run.torn.number}) left out")
    if not parts:
        return None
    return (f"{run.directory} is an unfinished run: {', '.join(parts)}; scored what is there "
            "(`travelgym run ... --resume` completes it)")  # fmt: skip


def counted_run_episodes(directory: Path, suite: str,
                         notes: list[str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The episodes (dicts) of the run directory ``directory`` of ``suite`` that its metrics
    count (infra errors left out unless the run counts them as failures); a note of episodes
    missing from an unfinished run goes to ``notes``. :class:`RunDirError` when it cannot be
    read."""
    from travelgym.core.summary import counted_episodes

    run = read_run(directory, suite, as_dicts=True)
    note = missing_note(run)
    if note and notes is not None:
        notes.append(note)
    return counted_episodes(run.episodes, run.manifest)
