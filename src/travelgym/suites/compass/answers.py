"""Reading answer files: JSONL recommendations, or a run directory's episodes."""

from __future__ import annotations

from pathlib import Path

from travelgym.core.answers import is_trial_number
from travelgym.core.errors import UserError
from travelgym.jsonl import JsonLinesError, iter_json_lines


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
        if "final_recommendation" in entry:  # an episode of a run directory
            entries.append({"task_id": entry["task_id"], "trial": trial,
                            "recommendation": entry.get("final_recommendation")})  # fmt: skip
        else:
            entries.append(
                {"task_id": entry["task_id"], "recommendation": entry.get("recommendation")}
            )
    return entries


def _run_answers(directory: Path, notes: list[str] | None) -> list[dict]:
    from travelgym.runner.store import RunDirError, missing_note, read_run

    try:
        run = read_run(directory, "compass", as_dicts=True)
    except RunDirError as exc:
        raise AnswerFileError(str(exc)) from None
    note = missing_note(run)
    if note and notes is not None:
        notes.append(note)
    return [{"task_id": e["task_id"], "trial": e.get("trial", 0),
             "recommendation": e.get("final_recommendation")} for e in run.episodes]  # fmt: skip
