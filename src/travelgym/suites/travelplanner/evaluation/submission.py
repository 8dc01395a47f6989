"""TravelPlanner submission files (JSONL, one line per query: ``idx``, ``query``, ``plan``)
read into :class:`Submission` models, and scored against the dataset's queries.

A line that is not a JSON object with an integer ``idx`` is an error naming the line; a plan of
the wrong shape reads as not delivered (``plan=None``, with the reason kept), never a crash."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from travelgym.suites.travelplanner.evaluation.metrics import (
    constraint_pass_counts,
    metrics_by_level,
)
from travelgym.suites.travelplanner.evaluation.results import evaluate_plan
from travelgym.suites.travelplanner.records import DayPlan, Query, Submission
from travelgym.suites.travelplanner.sandbox import Sandbox


class SubmissionError(ValueError):
    """A submission line that cannot be read (the message names the line and the field)."""


@dataclass
class SubmissionFile:
    """The submissions read, and why each undelivered plan (by ``idx``) is undelivered."""

    submissions: list[Submission]
    undelivered: dict[int, str] = field(default_factory=dict)


def parse_plan(value: Any) -> tuple[list[DayPlan] | None, str | None]:
    """``(days, None)`` for a plan of the right shape; ``(None, reason)`` otherwise (null or
    empty, not a list, a day not an object, a field not text). A day's number may be written
    ``days`` or ``day`` (both occur in the published example) or be left out."""
    if not value:
        return None, "no plan"
    if not isinstance(value, list):
        return None, f"plan is a {type(value).__name__}, not a list of days"
    days = []
    for i, raw in enumerate(value, 1):
        if not isinstance(raw, dict):
            return None, f"plan day {i} is a {type(raw).__name__}, not an object"
        record = {k: ("" if v is None else v) for k, v in raw.items() if k != "day"}
        numbered = "days" in raw or "day" in raw
        record.setdefault("days", raw.get("day", i))
        try:
            day = DayPlan.model_validate(record)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return None, f"plan day {i} field {where!r}: {first['msg']}"
        if not numbered:
            # a number we supplied is no information the plan gave (Complete Information)
            day.model_fields_set.discard("days")
        days.append(day)
    return days, None


def parse_line(text: str, line_no: int) -> tuple[Submission, str | None]:
    """One submission line: the :class:`Submission` and, for an undelivered plan, why."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise SubmissionError(f"line {line_no}: not JSON ({error.msg})") from None
    if not isinstance(raw, dict):
        raise SubmissionError(f"line {line_no}: not a JSON object")
    idx = raw.get("idx")
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise SubmissionError(f"line {line_no}: field 'idx' must be an integer, got {idx!r}")
    query = raw.get("query", "")
    if not isinstance(query, str):
        raise SubmissionError(f"line {line_no}: field 'query' must be text")
    plan, reason = parse_plan(raw.get("plan"))
    return Submission(idx=idx, query=query, plan=plan), reason


def read_submission(source: str | Path | Iterable[str]) -> SubmissionFile:
    """Read a submission JSONL file (a path, or its lines); blank lines are skipped; two lines
    for the same ``idx`` are an error."""
    lines = Path(source).read_text(encoding="utf-8").splitlines() if isinstance(
        source, str | Path) else list(source)  # fmt: skip
    read = SubmissionFile(submissions=[])
    seen: dict[int, int] = {}
    for line_no, text in enumerate(lines, 1):
        if not text.strip():
            continue
        submission, reason = parse_line(text, line_no)
        if submission.idx in seen:
            raise SubmissionError(f"line {line_no}: idx {submission.idx} already on line "
                                  f"{seen[submission.idx]}")  # fmt: skip
        seen[submission.idx] = line_no
        read.submissions.append(submission)
        if reason:
            read.undelivered[submission.idx] = reason
    return read


def score_submission(
    queries: Sequence[Query],
    submissions: Sequence[Submission] | SubmissionFile,
    sandbox_for: Callable[[Query], Sandbox],
) -> dict[str, Any]:
    """Evaluate each query's submitted plan (matched by ``idx``; a query without one is not
    delivered) and report ``metrics`` (``"overall"`` and per level), ``constraints`` (pass
    counts per constraint) and ``results`` (one :class:`PlanResult` per query, as dicts)."""
    notes: dict[int, str] = {}
    if isinstance(submissions, SubmissionFile):
        notes = submissions.undelivered
        submissions = submissions.submissions
    by_idx = {s.idx: s for s in submissions}
    results = []
    for query in queries:
        submission = by_idx.get(query.idx)
        plan = submission.plan if submission else None
        note = notes.get(query.idx) or (None if submission else "no submission line")
        sandbox = sandbox_for(query) if plan else None
        results.append(evaluate_plan(query, plan, sandbox, note=note))
    return {
        "metrics": metrics_by_level(results),
        "constraints": constraint_pass_counts(results),
        "results": [r.model_dump() for r in results],
    }
