"""How an episode ended, as the metrics must read it: ``completed``, ``model_error`` or
``infra_error``.

- ``completed``: the agent answered or the conversation ended normally (a wrong or empty answer
  included).
- ``model_error``: the model's own failure that is part of what is measured: it ran out of
  turns or steps, or its reply broke the protocol in a way only the model could have avoided
  (see :data:`MODEL_FAULTS`). Scored like a completed episode.
- ``infra_error``: nothing the model did: the endpoint down, refusing or rate limiting for good,
  a 5xx, a timeout, a reply that is no completion, the run's budget spent, a sandbox that could
  not start, a bug of the framework. Left out of the metrics and counted, like tau2-bench
  does; ``travelgym run ... --resume --retry-errors`` runs them again.

The category is decided where the error is raised (the exception's type and the category the
raising code gave it), never by reading a message. Episodes saved before outcomes existed carry
none: :func:`outcome_of` infers theirs from the stored termination and error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

Outcome = Literal["completed", "model_error", "infra_error"]
OUTCOMES: tuple[Outcome, ...] = ("completed", "model_error", "infra_error")

#: :class:`~travelgym.llm.protocol.LLMError` categories that are the model's fault (its reply
#: broke the protocol, or a Python policy in its place failed); every other category is the
#: infrastructure's.
MODEL_FAULTS = frozenset({"too_many_tool_calls", "policy_error"})
#: Terminations that end an episode because the model ran out of turns or steps.
LIMIT_TERMINATIONS = frozenset({"turn_limit", "step_limit"})
RETRY_HINT = "travelgym run ... --resume --retry-errors"


class InfraError(Exception):
    """Raised where the framework, not the model, failed an episode (e.g. a sandbox that cannot
    start): it ends the episode as an ``infra_error`` whose cause is ``cause``. Tool layers let
    it through instead of turning it into a result the model sees."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(f"{cause}: {message}")
        self.cause = cause


def classify(exc: BaseException, role: str = "agent") -> tuple[Outcome, str]:
    """``(outcome, cause)`` of an exception that ended an episode: a model call's failure by the
    category its client gave it (the cause names whose call it was: ``role``, e.g. ``user``),
    an :class:`InfraError` by its cause, anything else a framework bug (``internal:
    TypeName``)."""
    from travelgym.llm.protocol import LLMError

    if isinstance(exc, LLMError):
        outcome = "model_error" if exc.category in MODEL_FAULTS else "infra_error"
        return outcome, f"{role} {exc.category}"
    if isinstance(exc, InfraError):
        return "infra_error", exc.cause
    return "infra_error", f"internal: {type(exc).__name__}"


def settle(episode: Any, exc: BaseException | None = None, *, role: str = "agent") -> None:
    """Set ``episode.outcome`` and ``episode.cause``: from ``exc`` when the episode ended on one
    (``role``: whose model call raised it), else from its termination (a turn or step limit is
    a model error). An outcome already set is kept: the first failure is the cause."""
    if episode.outcome is not None:
        return
    if exc is not None:
        episode.outcome, episode.cause = classify(exc, role)
    elif episode.termination in LIMIT_TERMINATIONS:
        episode.outcome, episode.cause = "model_error", episode.termination
    else:
        episode.outcome, episode.cause = "completed", None


# old records: the error text the episode runners wrote, "agent: CATEGORY: message" for a model
# call's failure, "user: CATEGORY: ..." for the simulated user's, "TypeName: ..." for a bug
def _inferred(episode: dict[str, Any]) -> tuple[Outcome, str | None]:
    termination = episode.get("termination")
    if termination != "error":
        if termination in LIMIT_TERMINATIONS:
            return "model_error", termination
        return "completed", None
    error = str(episode.get("error") or "")
    role, _, rest = error.partition(": ")
    if role in ("agent", "user"):
        category = rest.partition(":")[0].strip()
        if category in MODEL_FAULTS:
            return "model_error", f"{role} {category}"
        return "infra_error", f"{role} {category or 'unknown'}"
    return "infra_error", f"internal: {role.split()[0] if role else 'unknown'}"


def outcome_of(episode: Any) -> tuple[Outcome, str | None]:
    """``(outcome, cause)`` of a stored episode (a JSON dict, or a suite's episode model as a
    run is read back): as recorded, or inferred from its termination and error when it was
    saved before outcomes existed."""
    if not isinstance(episode, dict):  # a model read back: format 2, its outcome upgraded in
        return episode.outcome, episode.cause
    outcome = episode.get("outcome")
    if outcome in OUTCOMES:
        return outcome, episode.get("cause")
    return _inferred(episode)


def add_outcome(line: dict[str, Any]) -> dict[str, Any]:
    """Episode format 1 -> 2 (what every suite's episodes gained at once): the outcome and cause
    inferred from the stored termination and error; no simulated user's usage is known."""
    outcome, cause = _inferred(line)
    return {**line, "format_version": "2", "outcome": outcome, "cause": cause}


def is_infra_error(episode: Any) -> bool:
    """Whether a stored episode ended in an infrastructure error (left out of the metrics)."""
    return outcome_of(episode)[0] == "infra_error"


def count_outcomes(episodes: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``n`` (every episode), the count of each outcome, the infra-error rate in percent and the
    infra errors' causes, most common first."""
    counts: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    for episode in episodes:
        outcome, cause = outcome_of(episode)
        counts[outcome] += 1
        if outcome == "infra_error":
            causes[cause or "unknown"] += 1
    n = sum(counts.values())
    infra = counts["infra_error"]
    return {"n": n, "completed": counts["completed"], "model_errors": counts["model_error"],
            "infra_errors": infra, "infra_error_pct": round(100 * infra / n, 1) if n else 0.0,
            "infra_causes": dict(causes.most_common())}  # fmt: skip


def scored_episodes(episodes: list[Any], count_errors_as_failures: bool = False) -> list[Any]:
    """The episodes (dicts or models) the metrics are computed over: all but the infra errors
    (every one with ``count_errors_as_failures``, scored as they were saved)."""
    if count_errors_as_failures:
        return list(episodes)
    return [e for e in episodes if not is_infra_error(e)]


def warning_line(outcomes: dict[str, Any], label: str = "") -> str | None:
    """The one-line warning of a summary's outcome counts when infra errors exist: how many,
    the most common cause and the command that runs them again (``None`` when there are none)."""
    infra = outcomes.get("infra_errors", 0)
    if not infra:
        return None
    cause, times = next(iter(outcomes.get("infra_causes", {}).items()), ("unknown", infra))
    who = f"{label}: " if label else ""
    return (f"warning: {who}{infra} of {outcomes['n']} episodes failed for reasons outside the "
            f"model (most common: {cause}, {times}x) and are left out of the metrics; run them "
            f"again with `{RETRY_HINT}`")  # fmt: skip


def failure_text(exc: BaseException) -> str:
    """The recorded error of an episode its agent's failure ended: ``agent: CATEGORY: ...`` for a
    model call's (:class:`~travelgym.llm.protocol.LLMError`), else the exception with its
    traceback."""
    import traceback

    from travelgym.llm.protocol import LLMError

    if isinstance(exc, LLMError):
        return f"agent: {exc}"
    return f"{type(exc).__name__}: {exc}\n{''.join(traceback.format_exception(exc, limit=6))}"
