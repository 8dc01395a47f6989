"""Re-scoring a TravelPlanner run's answers as the run scored them (``score`` of a run directory,
:mod:`travelgym.runner.recheck`): each plan checked against the run's own data, the database
when the run had it, else the query's reference information."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError


@contextmanager
def planner_rescorer(run_dir: Path, seed: int, data_dir: Path | None,
                     options: Any) -> Iterator[Callable[[dict, Any], dict | None] | None]:  # fmt: skip
    """A function scoring an episode line's answer as the run did
    (:func:`~travelgym.suites.travelplanner.planner_episode.safe_score` of the line's query
    against what the run checked plans against). The run's data is the one ``--data`` (and
    ``--database``) name, else the ingested file or a cached ``--data`` ingest of the data
    directory with the run's content hash; ``None`` when none is at hand, a UserError when the
    data named has other contents or another evaluation version made the run."""
    from travelgym.runner.store import read_manifest
    from travelgym.suites.travelplanner.run import EVALUATION_VERSION

    manifest = read_manifest(Path(run_dir))
    if str(manifest.get("evaluation_version", "1")) != EVALUATION_VERSION:
        yield None
        return
    split = manifest.get("split") or getattr(options, "split", None)
    data = _run_data(run_dir, manifest, options, data_dir, split)
    if data is None:
        yield None
        return
    try:
        made = manifest.get("checked_against")
        now = "database" if data.has_database else "reference"
        if made is not None and made != now:
            raise UserError(f"{run_dir}: the run checked plans against the {made}, the data at "
                            f"hand against the {now}; its scores cannot be re-derived")  # fmt: skip
        queries = {q.task_id: q for q in data.queries(data.split(split))}

        def rescore(line: dict[str, Any], answer: Any) -> dict[str, Any] | None:
            """The score the run would have stored for ``answer`` on ``line``'s query."""
            from travelgym.suites.travelplanner.planner_episode import safe_score

            query = queries.get(line.get("task_id"))  # type: ignore[arg-type]
            if query is None:  # no query of the run's split: the run scored none such
                return None
            return _normalised(safe_score(query, answer, data.sandbox_for(query)))

        yield rescore
    finally:
        data.close()


def _run_data(run_dir: Path, manifest: dict[str, Any], options: Any, data_dir: Path | None,
              split: str | None) -> Any:  # fmt: skip
    """The run's data, open (see :func:`planner_rescorer`), or ``None`` when none is at hand."""
    from travelgym.paths import suite_dir
    from travelgym.suites.travelplanner.ingest import SUITE, data_path, open_ingested
    from travelgym.suites.travelplanner.source import CACHE, PlannerData

    wanted = manifest.get("db_content_hash")
    given = getattr(options, "data", None)
    if given is not None:
        # the split as given, as the run's was: the same files then are the same cached ingest
        data = PlannerData.open(given, getattr(options, "database", None), data_dir,
                                getattr(options, "split", None))  # fmt: skip
        if wanted and data.content_hash != wanted:
            data.close()
            raise UserError(f"{run_dir}: the run was made on other TravelPlanner data (content "
                            f"hash {str(wanted)[:12]}, {given}'s is "
                            f"{str(data.content_hash)[:12]}); re-scoring it is refused")  # fmt: skip
        return data
    if not wanted:  # a run that recorded no hash cannot be matched with its data
        return None
    cached = suite_dir(SUITE, data_dir) / CACHE
    for path in [data_path(data_dir), *sorted(cached.glob("*.sqlite") if cached.is_dir() else [])]:
        try:
            found = PlannerData(*open_ingested(data_dir, path))
        except (UserError, OSError, ValueError, sqlite3.Error):  # not (or no longer) ingested
            continue
        if found.meta.get("content_hash") == wanted:
            return found
        found.close()
    return None


def _normalised(score: dict[str, Any] | None) -> dict[str, Any] | None:
    """``score`` as the episode line keeps it (the run writes it with pydantic's JSON)."""
    import pydantic_core

    return None if score is None else json.loads(pydantic_core.to_json(score))
