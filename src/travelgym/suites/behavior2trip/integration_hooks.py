"""Behavior2Trip's answers to the Suite hooks of integrations that hold episodes themselves
(the inspect_ai tasks): the run summary of episodes given as JSON dicts, by the same function
as a run directory's, and an instance's text. A mixin, so that ``suite.py`` stays small."""

from __future__ import annotations

from typing import Any


class TripIntegrationHooks:
    """Mixed into :class:`~travelgym.suites.behavior2trip.suite.Behavior2TripSuite` (before
    ``Suite``, whose defaults these replace)."""

    def summarize_episodes(self, episodes: list[dict[str, Any]]) -> dict[str, Any]:
        """DR, C and UPC micro/macro and final overall and by difficulty, with the run counts
        (:func:`~travelgym.suites.behavior2trip.scoring.summarize_run`)."""
        from travelgym.suites.behavior2trip.scoring import summarize_run

        return summarize_run(list(episodes))

    def task_text(self, task: Any) -> str:
        """The user's request the agent reads (the instance's instruction)."""
        return task.instruction.text
