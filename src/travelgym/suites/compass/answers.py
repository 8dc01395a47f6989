"""Reading answer files: JSONL recommendations, or a run directory's episodes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from travelgym.core.answers import is_trial_number
from travelgym.core.errors import UserError
from travelgym.jsonl import JsonLinesError, iter_json_lines

if TYPE_CHECKING:
    from travelgym.suites.compass.task_sets import TaskSet


class AnswerFileError(UserError, ValueError):
    """An answers file that cannot be read; the message names the file and line."""


def read_answers(path: Path, notes: list[str] | None = None) -> list[dict]:
    """Entries ``{"task_id", "recommendation"}`` from a JSONL file or a run directory (read
    strictly; a killed run's episodes are all scored, and ``notes`` gets how many are missing)."""
    path = Path(path)
    if path.is_dir():
        return _run_answers(path, notes)
    entries = []
    try:
        lines = list(iter_json_lines(path))
    except JsonLinesError as exc:
        raise AnswerFileError(str(exc)) from None
    for number, entry in lines:
        if not isinstance(entry, dict) or not isinstance(entry.get("task_id"), str):
            raise AnswerFileError(
                f"{path}:{number}: expected an object with 'task_id' and 'recommendation'"
            )
        trial = entry.get("trial", 0)
        if not is_trial_number(trial):
            raise AnswerFileError(f"{path}:{number}: 'trial' must be a whole number >= 0")
        if "final_recommendation" not in entry and "recommendation" not in entry:
            # a misspelt key would otherwise score as a task left unanswered
            raise AnswerFileError(f"{path}:{number}: no 'recommendation' (write null for a task "
                                  "left unanswered)")  # fmt: skip
        if "final_recommendation" in entry:  # an episode of a run directory
            entries.append({"task_id": entry["task_id"], "trial": trial,
                            "recommendation": entry.get("final_recommendation")})  # fmt: skip
        else:
            entries.append(
                {"task_id": entry["task_id"], "recommendation": entry.get("recommendation")}
            )
    return entries


def _run_answers(directory: Path, notes: list[str] | None) -> list[dict]:
    from travelgym.runner.counted import counted_run_episodes
    from travelgym.runner.store import RunDirError
    from travelgym.suites.compass.rescore import last_recommendation

    try:
        counted = counted_run_episodes(directory, "compass", notes)  # infra errors left out
    except RunDirError as exc:
        raise AnswerFileError(str(exc)) from None
    # the answer the agent's own turns give (score checks the stored one against it)
    return [{"task_id": e["task_id"], "trial": e.get("trial", 0),
             "recommendation": last_recommendation(e)} for e in counted]  # fmt: skip


def refuse_other_task_version(answers: Path, tasks: TaskSet) -> None:
    """Refuse to re-score a run directory made on another database seed or with another task
    file: its episodes keep the scores of their own version, and scoring them against these
    tasks would silently change what they mean."""
    import json

    db_seed = tasks.db_seed
    manifest_file = Path(answers) / "manifest.json"
    if not Path(answers).is_dir() or not manifest_file.is_file():
        return
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # read_answers reports an unreadable run directory
    if not isinstance(manifest, dict):
        return
    run_seed = manifest.get("db_seed")
    if isinstance(run_seed, int) and run_seed != db_seed:
        raise UserError(
            f"{answers}: the run used database seed {run_seed}; score it with --db-seed {run_seed}"
        )
    sha = manifest.get("tasks_sha256")
    current = tasks.sha256
    if sha and sha != current:
        raise UserError(
            f"{answers}: the run was made with another task file (sha256 {str(sha)[:12]}, this "
            f"install's is {current[:12]}); its episodes keep the scores of their own task "
            "version, re-scoring them against these tasks is refused"
        )
