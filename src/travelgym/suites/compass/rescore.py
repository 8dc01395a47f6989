"""Re-deriving a COMPASS run's answers and scores (``score`` of a run directory,
:mod:`travelgym.runner.recheck`): the final recommendation is the last one the agent made in its
turns, and its score is the plan's score on the run's database, tasks and ground truth, ranked
only where the run ranked it (evaluation episodes are scored unranked)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError


def last_recommendation(episode: dict[str, Any]) -> dict[str, Any] | None:
    """The last formal recommendation of the agent's turns (``None``: it made none)."""
    turns = episode.get("turns")
    for turn in reversed(turns if isinstance(turns, list) else []):
        if isinstance(turn, dict) and turn.get("role") == "agent" and turn.get("recommendation"):
            return turn["recommendation"]
    return None


def package_ids(answer: Any) -> set[str]:
    """The package ids a recommendation names (hotel, flight, permit; a list of hotels at level
    I) that are well-formed ids (:func:`~travelgym.suites.compass.packages.parse_package_id`);
    nothing for anything else."""
    from travelgym.suites.compass.packages import PackageIdError, parse_package_id

    if not isinstance(answer, dict):
        return set()
    values = [
        v for value in answer.values() for v in (value if isinstance(value, list) else [value])
    ]
    found = set()
    for value in values:
        try:
            parse_package_id(value)
        except PackageIdError:
            continue
        found.add(value.strip(" \t\r\n"))
    return found


@contextmanager
def compass_rescorer(run_dir: Path, seed: int, data_dir: Path | None,
                     options: Any) -> Iterator[Callable[[dict, Any], dict]]:  # fmt: skip
    """A function scoring an episode line's recommendation as the run did
    (:func:`~travelgym.suites.compass.scoring.score_recommendation` on the run's
    database seed, task file and ground truth; ``seed`` and ``options`` are not needed: the
    run's manifest names its database seed); a UserError when this install's database or task
    file is not the run's."""
    from travelgym.db import connect_readonly
    from travelgym.runner.store import read_manifest
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.ground_truth import ensure_ground_truth
    from travelgym.suites.compass.scoring import score_recommendation
    from travelgym.suites.compass.solver import Ranking, build_components
    from travelgym.suites.compass.task_sets import task_set

    manifest = read_manifest(Path(run_dir))
    db_seed = manifest.get("db_seed", 0)
    if not isinstance(db_seed, int) or isinstance(db_seed, bool):
        raise UserError(f"{run_dir}: its manifest's db_seed is not a whole number")
    db = ensure_database(seed=db_seed, data_dir=data_dir)
    if manifest.get("db_content_hash") not in (None, db.metadata.get("content_hash")):
        raise UserError("the run was made on another database")
    every = task_set(db_seed, data_dir)
    if manifest.get("tasks_sha256") not in (None, every.sha256):
        raise UserError("the run's tasks are not this install's task file")
    known = {task_id for task_id, _ in every.slots()}
    wanted = sorted({t for t in manifest.get("task_ids") or () if t in known})
    tasks = {t.task_id: t for t in every.load(wanted)}  # only the run's are drawn
    _, truths = ensure_ground_truth(seed=db_seed, data_dir=data_dir, tasks=every,
                                    task_ids=wanted)  # fmt: skip
    conn = connect_readonly(db.path)

    def rescore(line: dict[str, Any], answer: Any) -> dict[str, Any] | None:
        """The score the run would have stored for ``answer`` on ``line``'s task."""
        task_id = line.get("task_id")
        task = tasks.get(task_id) if isinstance(task_id, str) else None
        truth = truths.get(task_id) if isinstance(task_id, str) else None
        if task is None or truth is None:
            return None
        stored = line.get("score")
        ranked = isinstance(stored, dict) and stored.get("rank") is not None
        ranking = Ranking(task, build_components(conn, task)) if ranked else None
        return score_recommendation(conn, task, truth, answer, ranking).model_dump(mode="json")

    try:
        yield rescore
    finally:
        conn.close()
