"""Re-deriving a Behavior2Trip run's answers and scores from its own record (``score`` of a run
directory, :mod:`travelgym.runner.recheck`): the answer an episode's steps delivered, the score
the run stored for it (the 32 checks over the run's database and instances, the judge's
verdict as the run added it) and the tool ids a plan names."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.suites.behavior2trip.checks.data import ASCII_SPACE, POI_ID

#: the verdict of a judged run's episode whose stored verdict is missing or not one: the run
#: always stored one, so the re-derived score keeps this and differs from the stored one
MISSING_VERDICT = {"passed": None, "reason": "", "error": "the run's judge verdict is missing"}


def _normalised(score: dict[str, Any] | None) -> dict[str, Any] | None:
    """``score`` as the episode line keeps it (the run writes it with pydantic's JSON)."""
    import json

    import pydantic_core

    return None if score is None else json.loads(pydantic_core.to_json(score))


@contextmanager
def trip_rescorer(run_dir: Path, seed: int, data_dir: Path | None,
                  options: Any) -> Iterator[Callable[[dict, Any], dict | None] | None]:  # fmt: skip
    """A function scoring an episode line's answer as the run did: the checks over the run's
    database (its scale and seed) and instance set, then, where the run had a judge, the
    verdict it stored (an undelivered plan's verdict, which needs no model, re-derived).
    ``None`` for a run of other checks; a UserError for a run of other instances or another
    database (its scores cannot be re-derived here)."""
    from travelgym.db import connect_readonly
    from travelgym.runner.store import read_manifest
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.checks import CHECKS_VERSION, PlanDB
    from travelgym.suites.behavior2trip.instance_sets import versions
    from travelgym.suites.behavior2trip.run import Behavior2TripRun
    from travelgym.suites.behavior2trip.score_files import refuse_other_database

    manifest = read_manifest(Path(run_dir))
    made = {k: manifest.get(k, Behavior2TripRun.identity_keys[k]) for k in versions()}
    if made["checks_version"] != CHECKS_VERSION:
        yield None
        return
    current = versions()["instances_version"]
    if made["instances_version"] != current:
        raise UserError(f"{run_dir}: the run was made with instances version "
                        f"{made['instances_version']}, this install's is {current}; its "
                        "scores cannot be re-derived")  # fmt: skip
    keys = Behavior2TripRun.identity_keys
    scale = manifest.get("db_scale") or keys["db_scale"]
    which = manifest.get("instances") or keys["instances"]
    db_seed = manifest.get("db_seed", seed)
    db = ensure_database(scale=scale, seed=db_seed, data_dir=data_dir)
    refuse_other_database(Path(run_dir), db)
    judged = manifest.get("judge") is not None
    instances = _Instances(db, data_dir, which, manifest.get("noise") or 0.0)
    instances.load(str(manifest.get("split") or "test"), manifest.get("task_ids") or [])
    conn = connect_readonly(db.path)
    try:
        score_db = PlanDB(conn)

        def rescore(line: dict[str, Any], answer: Any) -> dict[str, Any] | None:
            """The score the run would have stored for ``answer`` on ``line``'s instance."""
            from travelgym.suites.behavior2trip.trip_episode import score_answer

            instance = instances.get(line.get("instance_id"), line.get("split"))
            if instance is None:  # no instance of the run's set: the run scored none such
                return None
            score = score_answer(instance, answer, score_db)
            if judged and score is not None:
                score = {**score, "judge": _verdict(line, answer)}
            return _normalised(score)

        yield rescore
    finally:
        conn.close()


class _Instances:
    """The run's instances by id, built (only the ones asked for) as ``score`` builds them."""

    def __init__(self, db: Any, data_dir: Path | None, which: str, noise: float = 0.0) -> None:
        self.db, self.data_dir, self.which, self.noise = db, data_dir, which, noise
        self.by_id: dict[str, Any] = {}
        self.missing: set[str] = set()

    def load(self, split: str, ids: list[Any]) -> None:
        """Build and keep the instances of ``ids`` that name one of ``split``."""
        from travelgym.suites.behavior2trip.instances import ensure_selected, known_slots

        wanted = [i for i in ids if isinstance(i, str) and i not in self.by_id]
        keys = known_slots(split, wanted) if split in ("train", "test") else []
        if keys:
            _, chosen = ensure_selected(self.db, self.data_dir, split, keys, instances=self.which,
                                        noise=self.noise)  # fmt: skip
            self.by_id.update({x.instance_id: x for x in chosen})

    def get(self, iid: Any, split: Any) -> Any:
        """The instance ``iid`` (of ``split``, else the split its id names), ``None`` if none."""
        if not isinstance(iid, str):
            return None
        if iid not in self.by_id and iid not in self.missing:
            parts = iid.split("-")
            named = parts[1] if len(parts) > 2 and parts[0] == "b2t" else None
            for where in dict.fromkeys(s for s in (split, named) if s in ("train", "test")):
                self.load(where, [iid])
            if iid not in self.by_id:
                self.missing.add(iid)
        return self.by_id.get(iid)


def _verdict(line: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The judge verdict the run stored with ``answer``'s score: an undelivered plan's is fixed
    (:func:`~travelgym.suites.behavior2trip.judge.judge_plan` calls no model for it), a
    delivered one's is the line's stored verdict (:data:`MISSING_VERDICT` when it has none)."""
    from travelgym.suites.behavior2trip.judge import JudgeVerdict
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    try:
        undelivered = answer is None or parse_plan(answer)[0] is None
    except Exception:  # noqa: BLE001 - not a text the run could have judged: no verdict to keep
        return dict(MISSING_VERDICT)
    if undelivered:
        return JudgeVerdict(passed=False, reason="no plan delivered").model_dump(mode="json")
    stored = line.get("score")
    stored = stored.get("judge") if isinstance(stored, dict) else None
    try:
        return JudgeVerdict.model_validate(stored).model_dump(mode="json")
    except ValueError:
        return dict(MISSING_VERDICT)


def plan_ids(answer: Any) -> set[str]:
    """The tool ids a plan answer names: its POI ids (``H00012``: hotels, restaurants,
    attractions, entertainment; in items and local legs) and its flight and train numbers;
    an empty set for anything that is no plan."""
    from travelgym.suites.behavior2trip.plan_parse import parse_plan

    if not isinstance(answer, str):
        return set()
    try:
        plan = parse_plan(answer)[0]
    except Exception:  # noqa: BLE001 - a warning's input: garbage names nothing
        return set()
    if plan is None:
        return set()
    found: set[str] = set()
    for day in plan.days:
        items = [day.breakfast, day.lunch, day.dinner, day.accommodation, *day.attractions,
                 *day.entertainment]  # fmt: skip
        found |= {_poi_id(getattr(x, "id", None)) for x in items if x is not None}
        for leg in day.local_transport:
            found |= {_poi_id(leg.from_), _poi_id(leg.to)}
        for leg in day.intercity_transport:
            if leg.mode in ("flight", "train") and isinstance(leg.number, str):
                found.add(_number(leg.number))
    found.discard("")
    return found


def _poi_id(value: Any) -> str:
    """The POI id ``value`` names as the checks read it (any case, ASCII spaces), else ``""``."""
    key = value.strip(ASCII_SPACE).upper() if isinstance(value, str) else ""
    return key if POI_ID.fullmatch(key) else ""


def _number(value: str) -> str:
    """A flight or train number as the tools write it (upper case, no spaces), else ``""``."""
    key = re.sub(r"\s+", "", value).upper()
    return key if re.fullmatch(r"[A-Z0-9]{2,10}", key, re.ASCII) else ""
