"""TravelPlanner's scores of runs and files: a run directory's episodes, or a submission JSONL
file (``idx``, ``query``, ``plan``, as TravelPlanner's leaderboard takes them) scored against
the ingested queries; TravelPlanner's metrics overall and per level, and per-constraint counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.columns import Column, table, text_column
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

#: the six rates (fractions stored, percentages printed), as every table names them
METRIC_COLUMNS = (
    Column("delivery_rate", "DR", scale=100, legend="delivery rate: queries answered with a plan"),
    Column("commonsense_micro", "CS micro", scale=100,
           legend="commonsense constraints passed among all checked"),
    Column("commonsense_macro", "CS macro", scale=100,
           legend="plans passing every commonsense constraint"),
    Column("hard_micro", "Hard micro", scale=100,
           legend="hard (user-stated) constraints passed among all checked"),
    Column("hard_macro", "Hard macro", scale=100, legend="plans passing every hard constraint"),
    Column("final_pass_rate", "Final", scale=100,
           legend="plans passing every commonsense and hard constraint"),
)  # fmt: skip
COLUMNS = tuple((c.label, c.key) for c in METRIC_COLUMNS)  # (label, key), as the report reads
QUERIES = Column("queries", "n", unit="", decimals=0, legend="queries the rates count")
AGENT, GROUP = text_column("agent"), text_column("group", legend="all queries or one level")


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


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """Summaries by agent label: the rates overall and per level (percent)."""
    rows = [{"agent": label, "group": "all" if level == "overall" else level, **m}
            for label, summary in results.items()
            for level, m in (summary.get("metrics") or {}).items()]  # fmt: skip
    return table([AGENT, GROUP, QUERIES, *METRIC_COLUMNS], rows)


def format_score(result: dict[str, Any]) -> str:
    """A score (run directory or submission) as text: the rates and per-constraint counts."""
    what = (f"submission {result['path']} ({result['split']} split, checked against the "
            f"{result['sandbox']})" if result.get("source") == "submission"
            else f"run {result.get('path', '')}")  # fmt: skip
    rows = [{"group": "all" if level == "overall" else level, **m}
            for level, m in (result.get("metrics") or {}).items()]  # fmt: skip
    lines = [what, table([GROUP, QUERIES, *METRIC_COLUMNS], rows)]
    lines.append("constraint                          passed / total")
    for cid, counts in (result.get("constraints") or {}).items():
        lines.append(f"  {cid:<32} {counts['passed']:>6} / {counts['total']}")
    return "\n".join(lines)
