"""COMPASS result tables as text: the metric columns (one definition each, shared by ``run``,
``score``, ``analyze`` and the report) and the tables of FR and OR-A % by agent and group."""

from __future__ import annotations

from typing import Any

from travelgym.core.columns import Column, N, table, text_column

METRIC_COLUMNS = (
    Column("FR", "FR", legend="feasible rate: answers that satisfy every constraint"),
    Column("OR5", "OR-5", legend="feasible and within the top 5 % of the task's feasible plans"),
    Column("OR10", "OR-10", legend="feasible and within the top 10 % of the feasible plans"),
    Column("OR20", "OR-20", legend="feasible and within the top 20 % of the feasible plans"),
    Column("optimal", "optimal", legend="feasible and exactly as good as the best feasible plan"),
)
AGENT = text_column("agent", legend="the agent of the run")
GROUP = text_column("group", legend="all episodes, one level (L1-L3) or one objective type")


def score_groups(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(group, figures)`` of a summary: all episodes, each level, each objective type."""
    groups = [("all", result["overall"])]
    groups += [(f"L{k}", v) for k, v in result.get("by_level", {}).items()]
    groups += list(result.get("by_objective", {}).items())
    return groups


def format_agents_table(results: dict[str, dict]) -> str:
    """FR, OR-5/10/20 and optimal by agent and group: the feasible-optimal gap at a glance."""
    rows = [{"agent": agent, "group": name, **agg} for agent, result in results.items()
            for name, agg in score_groups(result)]  # fmt: skip
    return table([AGENT, GROUP, N, *METRIC_COLUMNS], rows)


def format_score_table(result: dict) -> str:
    """FR, OR-5/10/20 and optimal overall, by level and by objective type, as text."""
    rows = [{"group": name, **agg} for name, agg in score_groups(result)]
    lines = [table([GROUP, N, *METRIC_COLUMNS], rows)]
    lines += [f"warning: {error}" for error in result.get("errors", [])]
    return "\n".join(lines)
