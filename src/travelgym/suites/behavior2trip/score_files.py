"""``travelgym score`` for Behavior2Trip: an answers file or a run directory, at the database
scale it was made for, optionally judged by an LLM (the paper's "LLM" pass rate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError

# the options a run's manifest fixes: (option, manifest key, the value of a manifest written
# before the key existed, and of an answers file without --flag); a run is scored at its own
RECORDED = {
    "scale": ("db_scale", "small", "small"),
    "noise": ("noise", 0.0, 0.0),
    # runs before quality control used the unfiltered set; the default set is the filtered one
    "instances": ("instances", "unfiltered", "filtered"),
}


def recorded_option(answers: Path, options: Any, name: str) -> Any:
    """Option ``name`` (see :data:`RECORDED`) to score ``answers`` at: a run directory's
    recorded value, else the flag's (its default when not given). A flag that contradicts the
    run's is an error, never a silent rescore on other instances or another database."""
    key, before, default = RECORDED[name]
    given = getattr(options, name) if name in options.model_fields_set else None
    if not Path(answers).is_dir():
        return default if given is None else given
    manifest = _manifest(answers)
    recorded = manifest.get(key, before) if manifest else default
    if recorded is None:
        recorded = before
    if given is not None and given != recorded:
        flag = "--" + name
        raise UserError(f"{answers} is a run at {name} {_shown(recorded)}, not {_shown(given)}: "
                        f"drop {flag} or use {flag} {_shown(recorded)}")  # fmt: skip
    return recorded


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


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


def refuse_other_seed(answers: Path, seed: int) -> None:
    """Refuse to re-score a run directory made on another database seed (before any database
    is built), naming the flag that scores it."""
    run_seed = _manifest(answers).get("db_seed")
    if isinstance(run_seed, int) and not isinstance(run_seed, bool) and run_seed != seed:
        raise UserError(f"{answers}: the run used database seed {run_seed}; score it with "
                        f"--db-seed {run_seed}")  # fmt: skip


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
    scale, noise, chosen_set = (recorded_option(answers, options, name)
                                for name in ("scale", "noise", "instances"))  # fmt: skip
    entries = read_answers(answers, notes)
    if not entries and not left_out_all(answers):  # a run's infra errors are counted apart
        raise UserError(f"{answers}: no answers in it")
    wanted = {e["instance_id"] for e in entries}
    slots = {split: known_slots(split, wanted) for split in _splits_of(entries)}
    # ids name their slots: a file of no known id is refused before anything is built
    known = {instance_id(*key) for keys in slots.values() for key in keys}
    refuse_nothing_known(answers, entries, known, "instance_id")
    refuse_other_seed(answers, seed)
    db = ensure_database(scale=scale, seed=seed, data_dir=data_dir)
    refuse_other_database(answers, db)
    instances = {}
    for split, keys in slots.items():
        _, chosen = ensure_selected(db, data_dir, split, keys, instances=chosen_set,
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
