"""TravelPlanner's scores of runs and files: a run directory's episodes, or a submission JSONL
file (``idx``, ``query``, ``plan``, as TravelPlanner's leaderboard takes them) scored against
the ingested queries; TravelPlanner's metrics overall and per level, and per-constraint counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.runner.run_summary import summarize_run
from travelgym.suites.travelplanner.evaluation import (
    SubmissionError,
    constraint_pass_counts,
    metrics_by_level,
    read_submission,
    score_submission,
)
from travelgym.suites.travelplanner.plans import result_of_score

COLUMNS = (("DR", "delivery_rate"), ("CS micro", "commonsense_micro"),
           ("CS macro", "commonsense_macro"), ("Hard micro", "hard_micro"),
           ("Hard macro", "hard_macro"), ("Final", "final_pass_rate"))  # fmt: skip


def summarize_episodes(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics (``overall`` and per level), per-constraint pass counts and the episode count
    of a run's episodes (JSON dicts); an unscored episode counts as undelivered."""
    from travelgym.suites.travelplanner.evaluation.results import PlanResult

    results = []
    for e in episodes:
        score = e.get("score")
        if score and "result" in score:
            results.append(result_of_score(score))
        else:
            idx = int(str(e.get("task_id", "x-0")).rsplit("-", 1)[-1] or 0)
            results.append(PlanResult(idx=idx, task_id=e.get("task_id"), level=e.get("level")
                                      or "easy", days=1, delivered=False, note="unscored"))  # fmt: skip
    errors = sum(1 for e in episodes if e.get("termination") == "error")
    return {"episodes": len(episodes), "errors": errors, "metrics": metrics_by_level(results),
            "constraints": constraint_pass_counts(results)}  # fmt: skip


def score_run_dir(run_dir: Path, notes: list[str]) -> dict[str, Any]:
    """A run directory's summary (the one every command shows:
    :func:`travelgym.runner.run_summary.summarize_run`); what it misses goes to ``notes``."""
    from travelgym.core.registry import get_suite
    from travelgym.runner.counted import missing_note
    from travelgym.runner.store import read_run

    note = missing_note(read_run(run_dir, "travelplanner", as_dicts=True))
    if note:
        notes.append(note)
    return {
        "source": "run",
        "path": str(run_dir),
        **summarize_run(get_suite("travelplanner"), run_dir),
    }


def score_submission_file(path: Path, options: Any, data_dir: Path | None) -> dict[str, Any]:
    """A TravelPlanner submission file scored against the queries of the split (the options'
    ``--split``, ``--data``/``--database``)."""
    from travelgym.suites.travelplanner.source import PlannerData

    try:
        read = read_submission(path)
    except SubmissionError as exc:
        raise UserError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    if not read.submissions:
        raise UserError(f"{path}: no submission lines in it")
    data = PlannerData.open(options.data, options.database, data_dir, options.split)
    try:
        split = data.split(options.split)
        queries = data.queries(split)
        known = {q.idx for q in queries}
        if not any(s.idx in known for s in read.submissions):
            raise UserError(f"{path}: none of its {len(read.submissions)} line(s) has the idx "
                            f"of a {split} query (1-{len(queries)})")  # fmt: skip
        result = score_submission(queries, read, data.sandbox_for)
    finally:
        data.close()
    result = {k: v for k, v in result.items() if k != "results"} | {"results": result["results"]}
    return {"source": "submission", "path": str(path), "split": split,
            "sandbox": "database" if data.has_database else "reference information",
            "episodes": len(queries), **result}  # fmt: skip


def format_metrics_row(label: str, m: dict[str, Any]) -> str:
    """One table row of the six rates in percent."""
    cells = " ".join(f"{100 * m[key]:>10.1f}" for _, key in COLUMNS)
    return f"{label:<28} {m['queries']:>5} {cells}"


def header() -> str:
    """The table header."""
    return f"{'':<28} {'n':>5} " + " ".join(f"{name:>10}" for name, _ in COLUMNS)


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """Summaries by agent label: the rates overall and per level (percent)."""
    lines = [header()]
    for label, summary in results.items():
        by_level = summary.get("metrics") or {}
        for level, m in by_level.items():
            lines.append(format_metrics_row(label if level == "overall" else f"  {level}", m))
    return "\n".join(lines)


def format_score(result: dict[str, Any]) -> str:
    """A score (run directory or submission) as text: the rates and per-constraint counts."""
    what = (f"submission {result['path']} ({result['split']} split, checked against the "
            f"{result['sandbox']})" if result.get("source") == "submission"
            else f"run {result.get('path', '')}")  # fmt: skip
    lines = [what, format_table({"overall": result})]
    lines.append("constraint                          passed / total")
    for cid, counts in (result.get("constraints") or {}).items():
        lines.append(f"  {cid:<32} {counts['passed']:>6} / {counts['total']}")
    return "\n".join(lines)
