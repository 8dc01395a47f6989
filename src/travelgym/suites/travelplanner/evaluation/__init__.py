"""TravelPlanner's evaluation, reproducing its published script: plan text parsing, the 8
commonsense and 5 hard constraints, the metrics and submission files."""

from travelgym.suites.travelplanner.evaluation.base import COMMONSENSE, HARD, Constraint, Verdict
from travelgym.suites.travelplanner.evaluation.hard import total_cost
from travelgym.suites.travelplanner.evaluation.metrics import (
    constraint_pass_counts,
    metrics,
    metrics_by_level,
)
from travelgym.suites.travelplanner.evaluation.results import PlanResult, evaluate_plan
from travelgym.suites.travelplanner.evaluation.submission import (
    SubmissionError,
    SubmissionFile,
    read_submission,
    score_submission,
)

__all__ = [
    "COMMONSENSE",
    "HARD",
    "Constraint",
    "PlanResult",
    "SubmissionError",
    "SubmissionFile",
    "Verdict",
    "constraint_pass_counts",
    "evaluate_plan",
    "metrics",
    "metrics_by_level",
    "read_submission",
    "score_submission",
    "total_cost",
]
