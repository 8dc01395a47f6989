"""The columns of Behavior2Trip's figures, one definition each (JSON key, label, unit,
precision, legend), and the tables ``run`` and ``score`` print with them; ``analyze``
(:mod:`.analysis_text`) and the report read the same columns."""

from __future__ import annotations

from typing import Any

from travelgym.core.columns import Column, N, present, table, text_column
from travelgym.suites.behavior2trip.clarify_metrics import TURNS

METRIC_COLUMNS = (
    Column("DR", "DR", legend="delivery rate: answers that are a parseable plan"),
    Column("C_micro", "C micro", legend="commonsense checks passed among the applicable ones"),
    Column("C_macro", "C macro", legend="answers passing all their applicable commonsense checks"),
    Column("UPC_micro", "UPC micro",
           legend="user-preference checks passed among the applicable ones"),
    Column("UPC_macro", "UPC macro",
           legend="answers passing all their applicable user-preference checks"),
    Column("final", "Final", legend="answers passing every applicable C and UPC check"),
    Column("LLM", "LLM", legend="LLM-judge pass rate among the judged answers (runs with a judge)"),
    Column(TURNS, "turns", unit="turns", decimals=2,
           legend="mean clarification turns per answer (RQ1 runs)"),
)  # fmt: skip
OPTIONAL = ("LLM", TURNS)  # shown where some row has a value
BY_KEY = {c.key: c for c in METRIC_COLUMNS}
AGENT = text_column("agent", legend="the agent of the run")
RUN = text_column("run", legend="the run: its agent, with its directory where two runs share one")
GROUP = text_column("group", legend="all instances or one difficulty (easy, medium, hard)")


def columns_of(records: list[dict[str, Any]]) -> list[Column]:
    """The metric columns of a table of ``records`` (the optional ones where some has a value)."""
    return present(METRIC_COLUMNS, records, OPTIONAL)


def groups(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(group, figures)`` of a summary: all instances, then each difficulty."""
    return [("all", summary["overall"]), *(summary.get("by_difficulty") or {}).items()]


def format_trips_table(results: dict[str, dict]) -> str:
    """The metrics by agent and difficulty (percent), as ``run`` prints them."""
    rows = [{"agent": agent, "group": name, **agg} for agent, result in results.items()
            for name, agg in groups(result)]  # fmt: skip
    return table([AGENT, GROUP, N, *columns_of(rows)], rows)


def format_score_table(result: dict[str, Any]) -> str:
    """The metrics overall and by difficulty (percent), as ``score`` prints them."""
    rows = [{"group": name, **agg} for name, agg in groups(result)]
    return table([GROUP, N, *columns_of(rows)], rows)
