"""``travelgym analyze`` on Behavior2Trip run directories (paper Section 6): per run, the
metrics overall and by difficulty, every check's pass rate and, for RQ2, the metrics binned by
the length of the instance's behaviour trajectory (Figure 5); over the runs, RQ3's Table 4-style
table (:mod:`~travelgym.suites.behavior2trip.analysis_table`).

Scores are never recomputed: every figure aggregates the scores the episodes stored, through
:mod:`~travelgym.suites.behavior2trip.scoring` (``summarize_run``, ``aggregate``). Trajectory
lengths come from the installed instance files of each run's split, database scale and instance
set (only the lines of the runs' instances are parsed; nothing is generated here).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from travelgym.suites.behavior2trip.scoring import InstanceResult, aggregate, summarize_run

# Figure 5's x-axis (actions, ticks at 20 / 40 / 60): half-open bins [lo, hi), the last open
BINS: tuple[tuple[int, int | None], ...] = ((0, 20), (20, 40), (40, 60), (60, None))
BIN_METRICS = ("DR", "final", "C_micro", "UPC_micro", "LLM")
# what ``scoring.summarize_run`` reads of an episode (RQ1's keys: the clarification turns)
OUTCOME_KEYS = ("score", "termination", "p_action", "trajectory_withheld", "clarification")


def bin_label(lo: int, hi: int | None) -> str:
    """``0-19``, ``20-39``, ... and ``60+`` for the last, open bin."""
    return f"{lo}+" if hi is None else f"{lo}-{hi - 1}"


def bin_of(length: int) -> str:
    """The label of the bin a trajectory of ``length`` actions falls into."""
    for lo, hi in BINS:
        if length >= lo and (hi is None or length < hi):
            return bin_label(lo, hi)
    raise ValueError(f"a trajectory length must be >= 0, not {length}")


def load_run(directory: Path) -> dict[str, Any]:
    """The manifest and the counted episodes (as dicts; infra errors left out) of a
    Behavior2Trip run directory; ``ValueError``
    with one line for a directory without episodes or scored by other checks."""
    from travelgym.runner.store import RunDirError, read_run
    from travelgym.suites.behavior2trip.checks import CHECKS_VERSION

    try:
        run = read_run(Path(directory), "behavior2trip", as_dicts=True)
    except RunDirError as exc:
        raise ValueError(str(exc)) from None
    if not run.episodes:
        raise ValueError(f"{directory} has no episodes yet: nothing to analyse (finish the run "
                         "with `travelgym run ... --resume`)")  # fmt: skip
    version = str(run.manifest.get("checks_version") or "1")  # before the key: version 1
    if version != CHECKS_VERSION:
        raise ValueError(f"{directory} was scored by checks version {version} and this travelgym "
                         f"has version {CHECKS_VERSION}: its stored scores are not comparable; run "
                         f"it again to analyse it (`travelgym score {directory}` scores its "
                         "answers by the current checks)")  # fmt: skip
    from travelgym.core.summary import counted_episodes

    return {"dir": Path(directory), "manifest": run.manifest,
            "episodes": counted_episodes(run.episodes, run.manifest)}  # fmt: skip


def run_label(manifest: dict[str, Any], directory: Path) -> str:
    """The run's agent (the manifest's; else the directory name) and its RQ1 mode: the
    trajectory withheld, the clarifying user."""
    label = str(manifest.get("agent") or directory.name)
    if manifest.get("no_trajectory"):
        label += ", no trajectory"
    if manifest.get("clarify"):
        label += f", clarify: {manifest['clarify']}"
    return label


def run_labels(runs: list[dict[str, Any]]) -> list[str]:
    """Each run's :func:`run_label`, made unique by its directory name, then a number."""
    labels = [run_label(r["manifest"], r["dir"]) for r in runs]
    labels = [x if labels.count(x) == 1 else f"{x} ({r['dir'].name})"
              for x, r in zip(labels, runs, strict=True)]  # fmt: skip
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if labels.count(label) == 1 else f"{label} #{seen[label]}")
    return out


def instance_set(manifest: dict[str, Any]) -> tuple[str, str]:
    """``(database scale, instance set)`` a run drew its instances from; a manifest written
    before instance sets existed ran on what is now the unfiltered set."""
    return manifest.get("db_scale") or "small", manifest.get("instances") or "unfiltered"


def trajectory_lengths(runs: list[dict[str, Any]], data_dir: Path | None,
                       notes: list[str]) -> dict[tuple[str, str, str, str], int]:  # fmt: skip
    """``(scale, instance set, split, instance_id) -> number of behaviour actions`` of every
    instance the runs used, read from the installed instance files; what cannot be found goes
    to ``notes``."""
    from travelgym.suites.behavior2trip.instances import (
        INSTANCE_FORMAT_VERSION,
        instances_path,
        read_instances,
    )

    wanted: dict[tuple[str, str, str], set[str]] = {}
    for run in runs:
        scale, which = instance_set(run["manifest"])
        made = str(run["manifest"].get("instances_version") or "1/1.0.0").split("/")[0]
        if made != INSTANCE_FORMAT_VERSION:  # instance ids of another format name other instances
            notes.append(f"no trajectory lengths for {run['dir']}: it ran on instance format "
                         f"{made} and this install's files are format {INSTANCE_FORMAT_VERSION}")  # fmt: skip
            continue
        for e in run["episodes"]:
            split = e.get("split") or run["manifest"].get("split") or "test"
            wanted.setdefault((scale, which, split), set()).add(
                e.get("instance_id") or e["task_id"]
            )
    out: dict[tuple[str, str, str, str], int] = {}
    for (scale, which, split), ids in sorted(wanted.items()):
        name = f"{scale} {split} split ({which})"
        try:
            path = instances_path(split, data_dir, scale, which)
        except ValueError as exc:  # an instance set this travelgym does not know
            notes.append(f"no trajectory lengths for the {name}: {exc}")
            continue
        if not path.exists():
            notes.append(f"no trajectory lengths for the {name}: {path} does not exist "
                         "(`travelgym run behavior2trip` with this data directory writes it)")  # fmt: skip
            continue
        try:
            for x in read_instances(path, ids):
                out[(scale, which, split, x.instance_id)] = len(x.trajectory)
        except ValueError as exc:
            notes.append(f"no trajectory lengths from {path}: {str(exc).splitlines()[0]}")
            continue
        missing = sorted(i for i in ids if (scale, which, split, i) not in out)
        if missing:
            notes.append(f"{len(missing)} instance(s) of the {name} not in {path}: "
                         f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")  # fmt: skip
    return out


def check_rates(rows: list[InstanceResult]) -> list[dict[str, Any]]:
    """Every check (the 32 in catalogue order, then any other id the scores name): in how many
    answers it applied, how many of those passed it and the pass rate (percent; ``None`` when it
    never applied)."""
    from travelgym.suites.behavior2trip.checks import CHECKS

    counts: dict[str, list[int]] = {c.id: [0, 0] for c in CHECKS}
    meta = {c.id: (c.group, c.title) for c in CHECKS}
    for r in rows:
        for c in r.checks:
            tally = counts.setdefault(c.id, [0, 0])
            meta.setdefault(c.id, (c.group, ""))
            tally[0] += c.applicable
            tally[1] += c.passed is True
    return [{"id": cid, "group": meta[cid][0], "title": meta[cid][1], "applicable": a,
             "passed": p, "rate": round(100.0 * p / a, 2) if a else None}
            for cid, (a, p) in counts.items()]  # fmt: skip


def length_bins(rows: list[InstanceResult], lengths: list[int | None]) -> list[dict[str, Any]]:
    """RQ2: :func:`~travelgym.suites.behavior2trip.scoring.aggregate` of the answers in each
    trajectory-length bin (every bin listed, ``n`` 0 when empty); answers of unknown length are
    left out."""
    out = []
    for lo, hi in BINS:
        chosen = [r for r, n in zip(rows, lengths, strict=True)
                  if n is not None and n >= lo and (hi is None or n < hi)]  # fmt: skip
        agg = aggregate(chosen)
        out.append({"bin": bin_label(lo, hi), "lo": lo, "hi": hi, "n": agg["n"],
                    **{m: agg[m] for m in BIN_METRICS}})  # fmt: skip
    return out


def stored_result(directory: Path, episode: dict[str, Any]) -> InstanceResult:
    """The score an episode stored, as an :class:`InstanceResult`; ``ValueError`` naming the run
    and the episode when it is not one."""
    try:
        return InstanceResult.model_validate(episode["score"])
    except ValueError as exc:
        first = str(exc).splitlines()
        raise ValueError(f"{directory}: episode {episode.get('episode_id')!r} stores a score that "
                         f"is not a Behavior2Trip verdict ({' '.join(first[:3])})") from None  # fmt: skip


def analyze_run(run: dict[str, Any],
                lengths: dict[tuple[str, str, str, str], int]) -> dict[str, Any]:  # fmt: skip
    """One run's analysis: its summary (``summarize_run`` without the per-answer list), check
    rates, length bins and one feature row per episode."""
    manifest = run["manifest"]
    scale, which = instance_set(manifest)
    episodes = run["episodes"]
    scored = [e for e in episodes if e.get("score") is not None]
    rows = [stored_result(run["dir"], e) for e in scored]
    summary = summarize_run([{k: e.get(k) for k in OUTCOME_KEYS} for e in episodes])
    summary.pop("instances", None)
    split_of = [e.get("split") or manifest.get("split") or "test" for e in scored]
    n_actions = [
        lengths.get((scale, which, s, r.instance_id)) for s, r in zip(split_of, rows, strict=True)
    ]
    feature_rows = [{"instance_id": r.instance_id, "trial": r.trial, "difficulty": r.difficulty,
                     "actions": n, "delivered": r.delivered, "final": r.final,
                     "c_passed": r.c_passed, "c_applicable": r.c_applicable,
                     "upc_passed": r.upc_passed, "upc_applicable": r.upc_applicable,
                     "judge": None if r.judge is None else r.judge.passed}
                    for r, n in zip(rows, n_actions, strict=True)]  # fmt: skip
    return {
        "dir": str(run["dir"]), "agent": manifest.get("agent"), "split": manifest.get("split"),
        "db_scale": scale, "instances": which, "judge": manifest.get("judge"),
        "checks_version": str(manifest.get("checks_version") or "1"),
        "unscored": len(episodes) - len(scored), "summary": summary,
        "checks": check_rates(rows), "length_bins": length_bins(rows, n_actions),
        "unknown_length": sum(n is None for n in n_actions), "episodes": feature_rows,
    }  # fmt: skip


def analyze_runs(run_dirs: Sequence[Path], *, resamples: int = 2000, seed: int = 0,
                 allow_mixed: bool = False, data_dir: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """Every run's analysis (``runs``: label -> :func:`analyze_run`) and the Table 4-style
    ``table`` comparing them with the first (bootstrap intervals from ``resamples`` and
    ``seed``); runs on different instances are refused unless ``allow_mixed``."""
    from travelgym.suites.behavior2trip.analysis_table import ablation_table, task_set_problem

    runs = [load_run(Path(d)) for d in run_dirs]
    notes: list[str] = []
    problem = task_set_problem(runs)
    if problem and not allow_mixed:
        raise ValueError(f"{problem}: their scores are not comparable in one table; pass "
                         "--allow-mixed to compare them anyway")  # fmt: skip
    if problem:
        notes.append(f"mixed task sets ({problem}): the table compares different instances")
    lengths = trajectory_lengths(runs, data_dir, notes)
    labels = run_labels(runs)
    analysed = {label: analyze_run(run, lengths) for label, run in zip(labels, runs, strict=True)}
    for label, a in analysed.items():
        if a["unscored"]:
            notes.append(f"{label}: {a['unscored']} episode(s) without a score left out")
    return {"suite": "behavior2trip", "bins": [bin_label(lo, hi) for lo, hi in BINS],
            "runs": analysed, "table": ablation_table(analysed, resamples=resamples, seed=seed),
            "notes": notes}  # fmt: skip
