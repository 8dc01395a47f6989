"""The part of every results table that is the same for all suites: how many episodes each
agent ran, how they ended, what they used and cost, pass^k, and the warning when infrastructure
errors were left out. Printed under the suite's own metrics by ``run``, ``score`` and
``analyze``."""

from __future__ import annotations

from typing import Any

from travelgym.core.columns import Column, text_column
from travelgym.core.outcomes import warning_line
from travelgym.core.text_table import format_table


def _tokens(usage: dict[str, Any], role: str) -> str:
    entry = usage.get(role) or {}
    tokens_in, tokens_out = entry.get("input_tokens", 0), entry.get("output_tokens", 0)
    return f"{tokens_in:,}/{tokens_out:,}" if tokens_in or tokens_out else "-"


def _cost(usage: dict[str, Any]) -> str:
    cost = usage.get("cost_usd")
    return f"${cost['total']:,.4f}" if cost else "-"


def _pass(summary: dict[str, Any], kind: str) -> str:
    table = summary.get("pass_k") or {}
    if not table:
        return "-"
    k = max(table, key=int)
    value = table[k].get(kind)
    return "-" if value is None else f"{value:.1f}"


def _count(key: str, label: str, legend: str, unit: str = "") -> Column:
    return Column(key, label, unit=unit, decimals=0, legend=legend)


#: the outcome table's columns (``pass^k`` and ``pass@k`` are headed with the run's k)
OUTCOME_COLUMNS = (
    text_column("agent", legend="the agent of the run (with its directory where two share one)"),
    _count("outcomes.n", "n", "episodes of the run, infra errors included"),
    _count("outcomes.completed", "completed", "episodes that ended with an answer"),
    _count("outcomes.model_errors", "model errors", "episodes the model ended in error "
           "(a malformed action, a refused request); scored as failures"),
    _count("outcomes.infra_errors", "infra errors", "episodes lost to the harness or a provider "
           "(timeouts, rate limits), with their share of the run"),
    _count("usage.agent", "agent tokens in/out", "the agent model's input/output tokens"),
    _count("usage.user", "user tokens in/out", "the simulated user's input/output tokens"),
    _count("usage.cost_usd.total", "cost", "what the tokens cost where a price is known", "USD"),
    Column("pass_k.K.pass^k", "pass^k", legend="tasks every one of k trials solved"),
    Column("pass_k.K.pass@k", "pass@k", legend="tasks some one of k trials solved"),
)  # fmt: skip


def outcome_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows (one per agent label) of the outcome table of ``results``."""
    with_k = [s for s in results.values() if s.get("pass_k")]
    k = max((int(key) for s in with_k for key in s["pass_k"]), default=0)
    header = [c.label for c in OUTCOME_COLUMNS[:8]]
    if k:
        header += [f"pass^{k}", f"pass@{k}"]
    rows = []
    for label, summary in results.items():
        counts, usage = summary.get("outcomes") or {}, summary.get("usage") or {}
        infra = counts.get("infra_errors", 0)
        row = [label, str(counts.get("n", 0)), str(counts.get("completed", 0)),
               str(counts.get("model_errors", 0)),
               f"{infra} ({counts.get('infra_error_pct', 0.0):g} %)",
               _tokens(usage, "agent"), _tokens(usage, "user"), _cost(usage)]  # fmt: skip
        if k:
            row += [_pass(summary, "pass^k"), _pass(summary, "pass@k")]
        rows.append(row)
    return header, rows


def outcome_table(results: dict[str, dict[str, Any]]) -> str:
    """The outcome table of ``results`` (agent label -> summary) as aligned text, with a line
    saying how infra errors were counted."""
    lines = format_table(*outcome_rows(results)).splitlines()
    counted = any(
        (s.get("outcomes") or {}).get("count_errors_as_failures") for s in results.values()
    )
    lines.append("infra errors are scored as failures (--count-errors-as-failures)" if counted
                 else "metrics above leave infra errors out (--count-errors-as-failures counts "
                 "them as failures)")  # fmt: skip
    return "\n".join(lines)


def warnings(results: dict[str, dict[str, Any]]) -> list[str]:
    """One warning line per agent whose run has infra errors."""
    multiple = len(results) > 1
    lines = (warning_line(s.get("outcomes") or {}, label if multiple else "")
             for label, s in results.items())  # fmt: skip
    return [line for line in lines if line]


def infra_error_rate(summary: dict[str, Any]) -> float:
    """The share (0-1) of a summary's episodes that ended in an infra error."""
    counts = summary.get("outcomes") or {}
    n = counts.get("n", 0)
    return counts.get("infra_errors", 0) / n if n else 0.0
