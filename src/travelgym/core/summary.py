"""The score summary of a run, written once for every suite: the suite's metrics over the
episodes that count (all but infrastructure errors: :mod:`travelgym.core.outcomes`), with the
run's outcome counts, token usage (and cost, when priced) and, with several trials, pass^k.

The suite supplies only its metrics (:meth:`~travelgym.core.Suite.summarize_episodes`) and
what success means for pass^k (:meth:`~travelgym.core.Suite.succeeded`); everything here is the
same for all of them, so ``run``, ``score``, ``analyze``, the report and the integrations show
the same counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from travelgym.core.outcomes import count_outcomes, scored_episodes
from travelgym.core.passk import pass_at_k_table
from travelgym.core.usage_totals import usage_totals

if TYPE_CHECKING:
    from travelgym.core.suite import Suite

#: the manifest key that makes a run score its infra errors as failures (``run
#: --count-errors-as-failures``), recorded so that ``score`` and ``analyze`` read it the same way
COUNT_ERRORS_KEY = "count_errors_as_failures"


#: the summary entries every suite's has: how the figures were counted (``score`` adds them to
#: a re-scored run directory's result)
ACCOUNTING = ("outcomes", "usage", "pass_k")


def counted_episodes(episodes: list[Any], manifest: dict[str, Any]) -> list[Any]:
    """The episodes (dicts or models) of a run with ``manifest`` that its metrics count (see
    :func:`~travelgym.core.outcomes.scored_episodes`): what a suite re-scores or analyses of a
    run directory."""
    return scored_episodes(episodes, bool(manifest.get(COUNT_ERRORS_KEY)))


def summarize_episodes(suite: Suite, episodes: list[dict[str, Any]],
                       manifest: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The summary of ``episodes`` (JSON dicts as a run directory stores them) of a run with
    ``manifest``: the suite's metrics over the episodes that count, ``outcomes`` (``n`` and
    each outcome's count, the infra errors' causes), ``usage`` (tokens of the agent and the
    simulated user, and cost where a price is known) and ``pass_k`` (with more than one trial)."""
    manifest = manifest or {}
    counted = counted_episodes(episodes, manifest)
    summary = suite.summarize_episodes(counted, manifest)
    summary["outcomes"] = {**count_outcomes(episodes),
                           COUNT_ERRORS_KEY: bool(manifest.get(COUNT_ERRORS_KEY))}  # fmt: skip
    summary["usage"] = usage_totals(episodes, manifest.get("pricing"))
    trials = manifest.get("trials", 1)
    if isinstance(trials, int) and trials > 1:
        summary["pass_k"] = pass_at_k_table(counted, suite.succeeded, trials)
    return summary
