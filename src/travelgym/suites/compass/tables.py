"""COMPASS result tables as text: FR and OR-A % by agent and level, score tables."""

from __future__ import annotations


def format_agents_table(results: dict[str, dict]) -> str:
    """FR and OR-5/10/20 by agent and level: the feasible-optimal gap at a glance."""
    lines = [f"{'agent':<22} {'level':<8} {'n':>4} {'FR':>7} {'OR-5':>7} {'OR-10':>7} {'OR-20':>7}"]
    for agent, result in results.items():
        rows = [("all", result["overall"])] + [(f"L{k}", v) for k, v in result["by_level"].items()]
        for name, agg in rows:
            lines.append(
                f"{agent:<22} {name:<8} {agg['n']:>4} {agg['FR']:>7.1f} {agg['OR5']:>7.1f} "
                f"{agg['OR10']:>7.1f} {agg['OR20']:>7.1f}"
            )
    return "\n".join(lines)


def format_score_table(result: dict) -> str:
    """A plain-text table of FR / OR-5 / OR-10 / OR-20 / optimal overall, by level and objective."""
    rows = [("overall", result["overall"])]
    rows += [(f"level {k}", v) for k, v in result["by_level"].items()]
    rows += [(k, v) for k, v in result["by_objective"].items()]
    lines = [f"{'':<14} {'n':>4} {'FR':>7} {'OR-5':>7} {'OR-10':>7} {'OR-20':>7} {'optimal':>8}"]
    for name, agg in rows:
        lines.append(
            f"{name:<14} {agg['n']:>4} {agg['FR']:>7.1f} {agg['OR5']:>7.1f} "
            f"{agg['OR10']:>7.1f} {agg['OR20']:>7.1f} {agg['optimal']:>8.1f}"
        )
    for error in result.get("errors", []):
        lines.append(f"warning: {error}")
    return "\n".join(lines)
