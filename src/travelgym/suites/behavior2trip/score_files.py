"""``travelgym score`` for Behavior2Trip: an answers file or a run directory, at the database
scale it was made for, optionally judged by an LLM (the paper's "LLM" pass rate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError


def scale_for(answers: Path, options: Any) -> str:
    """The database scale to score ``answers`` at: a run directory's recorded ``db_scale``
    (a run made before the key existed was small), else ``--scale`` (default small). A
    ``--scale`` that contradicts the run's is an error, never a silent rescore."""
    from travelgym.runner.store import read_manifest

    given = options.scale if "scale" in options.model_fields_set else None
    if not Path(answers).is_dir():
        return given or "small"
    recorded = read_manifest(Path(answers)).get("db_scale") or "small"
    if given is not None and given != recorded:
        raise UserError(f"{answers} is a run at scale {recorded}, not {given}: drop --scale "
                        f"or use --scale {recorded}")  # fmt: skip
    return recorded


def noise_for(answers: Path, options: Any) -> float:
    """The ``--noise`` level to score ``answers`` at: a run directory's recorded ``noise``
    (0 for a run made before the key existed), else ``--noise`` (default 0). A ``--noise``
    that contradicts the run's is an error, never a silent rescore on other instances."""
    given = options.noise if "noise" in options.model_fields_set else None
    if not Path(answers).is_dir():
        return given or 0.0
    recorded = _manifest(answers).get("noise") or 0.0
    if given is not None and given != recorded:
        raise UserError(f"{answers} is a run at noise {recorded:g}, not {given:g}: drop --noise "
                        f"or use --noise {recorded:g}")  # fmt: skip
    return recorded


def refuse_other_versions(answers: Path) -> None:
    """Refuse to re-score a run directory made with other checks or instance files: its
    episodes keep the scores of their own version (a run from before versions were recorded
    used version 1 of both)."""
    from travelgym.suites.behavior2trip.instance_sets import versions
    from travelgym.suites.behavior2trip.run import Behavior2TripRun

    manifest = _manifest(answers)
    if not manifest:
        return
    for key, current in versions().items():
        made = manifest.get(key, Behavior2TripRun.identity_keys[key])
        if made != current:
            what = key.replace("_version", "")
            raise UserError(f"{answers}: the run was made with {what} version {made}, this "
                            f"install's is {current}; its episodes keep the scores of their own "
                            "version, re-scoring them is refused")  # fmt: skip


def refuse_other_database(answers: Path, db: Any) -> None:
    """Refuse to re-score a run directory made on a database with other contents (another
    generator version or seed): the same plan can pass or fail other checks there."""
    made = _manifest(answers).get("db_content_hash")
    current = db.metadata.get("content_hash")
    if made and current and made != current:
        raise UserError(f"{answers}: the run was made on another database (content hash "
                        f"{str(made)[:12]}, this install's is {str(current)[:12]}); re-scoring "
                        "it is refused")  # fmt: skip


def _manifest(answers: Path) -> dict[str, Any]:
    """A run directory's manifest, ``{}`` for an answers file or an unreadable one (reading
    the answers reports that)."""
    from travelgym.runner.store import RunDirError, read_manifest

    if not Path(answers).is_dir():
        return {}
    try:
        return read_manifest(Path(answers))
    except RunDirError:
        return {}


def score_trips(answers: Path, seed: int, data_dir: Path | None, notes: list[str], options: Any,
                base_url: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Score ``answers`` (see :meth:`Behavior2TripSuite.score`); with ``options.judge`` every
    delivered plan is judged by that model at ``base_url``, else the verdicts a judged run
    stored are kept. The result records ``db_scale`` and ``judge``."""
    from travelgym.core.answers import left_out_all, refuse_nothing_known
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instance_model import instance_id
    from travelgym.suites.behavior2trip.instances import ensure_selected, known_slots
    from travelgym.suites.behavior2trip.scoring import read_answers, score_answers

    refuse_other_versions(answers)
    scale = scale_for(answers, options)
    noise = noise_for(answers, options)
    entries = read_answers(answers, notes)
    if not entries and not left_out_all(answers):  # a run's infra errors are counted apart
        raise UserError(f"{answers}: no answers in it")
    wanted = {e["instance_id"] for e in entries}
    slots = {split: known_slots(split, wanted) for split in _splits_of(entries)}
    # ids name their slots: a file of no known id is refused before anything is built
    known = {instance_id(*key) for keys in slots.values() for key in keys}
    refuse_nothing_known(answers, entries, known, "instance_id")
    db = ensure_database(scale=scale, seed=seed, data_dir=data_dir)
    refuse_other_database(answers, db)
    instances = {}
    for split, keys in slots.items():
        _, chosen = ensure_selected(db, data_dir, split, keys, instances=options.instances,
                                    noise=noise)  # fmt: skip
        instances.update({x.instance_id: x for x in chosen})
    judge = None
    if options.judge is not None:
        from travelgym.runner.specs import make_model_client

        judge = make_model_client(options.judge, base_url, {})
    result = score_answers(entries, instances, db.path, judge=judge, close_judge=True)
    return {**result, "db_scale": scale, "judge": options.judge,
            **({"noise": noise} if noise else {})}  # fmt: skip


def _splits_of(entries: list[dict[str, Any]]) -> tuple[str, ...]:
    """The splits the entries' instance ids name (``b2t-<split>-...``); both when one is not of
    that form (it is then reported unknown after looking everywhere)."""
    found = set()
    for e in entries:
        parts = str(e["instance_id"]).split("-")
        if len(parts) < 2 or parts[0] != "b2t" or parts[1] not in ("train", "test"):
            return ("train", "test")
        found.add(parts[1])
    return tuple(s for s in ("train", "test") if s in found)
