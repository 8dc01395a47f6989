"""Reading answer files: JSONL recommendations, or a run directory's episodes."""

from __future__ import annotations

import json
from pathlib import Path


class AnswerFileError(ValueError):
    """An answers file that cannot be read; the message names the file and line."""


def read_answers(path: Path, notes: list[str] | None = None) -> list[dict]:
    """Entries ``{"task_id", "recommendation"}`` from a JSONL file or a run directory (read
    strictly; a killed run's episodes are all scored, and ``notes`` gets how many are missing)."""
    path = Path(path)
    if path.is_dir():
        return _run_answers(path, notes)
    entries = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnswerFileError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnswerFileError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(entry, dict) or "task_id" not in entry:
            raise AnswerFileError(
                f"{path}:{number}: expected an object with 'task_id' and 'recommendation'"
            )
        if "final_recommendation" in entry:  # an episode of a run directory
            entries.append({"task_id": entry["task_id"], "trial": entry.get("trial", 0),
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
