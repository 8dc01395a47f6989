"""Behavior2Trip's answers to the Suite hooks of the integrations: the run summary of episodes
given as JSON dicts (by the same function as a run directory's) and an instance's text for the
inspect_ai tasks; the splits and columns of an exported dataset. A mixin, so that ``suite.py``
stays small."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TripIntegrationHooks:
    """Mixed into :class:`~travelgym.suites.behavior2trip.suite.Behavior2TripSuite` (before
    ``Suite``, whose defaults these replace)."""

    # Chinese: city names in the data (北京), and what a model writes; with CJK punctuation
    # and full-width forms (，。：)
    text_ranges = ((0x3000, 0x303F), (0x4E00, 0x9FFF), (0xFF00, 0xFFEF))

    def summarize_episodes(self, episodes: list[dict[str, Any]],
                           manifest: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """DR, C and UPC micro/macro and final overall and by difficulty, with the run counts
        (:func:`~travelgym.suites.behavior2trip.scoring.summarize_run`)."""
        from travelgym.suites.behavior2trip.scoring import summarize_run

        return summarize_run(list(episodes))

    def succeeded(self, episode: dict[str, Any]) -> bool:
        """Final: a delivered plan that passes every applicable C and UPC check."""
        return bool((episode.get("score") or {}).get("final"))

    def task_text(self, task: Any) -> str:
        """The user's request the agent reads (the instance's instruction)."""
        return task.instruction.text

    def dataset_splits(self, options: Any, data_dir: Path | None = None) -> dict:
        """Both splits, or the one ``--split`` names."""
        from travelgym.suites.behavior2trip.instances import SPLITS

        if "split" in options.model_fields_set:
            return {options.split: options}
        given = options.model_dump(exclude_unset=True)
        return {s: type(options)(**{**given, "split": s}) for s in SPLITS}

    dataset_column_help = {
        "split": "train or test", "difficulty": "easy, medium or hard",
        "departure_city": "where the trip starts", "destination_city": "the city visited",
        "days": "trip length in days", "travellers": "people travelling",
        "budget_cny": "the stated budget in CNY", "actions": "behaviour trajectory length",
        "request": "the instruction text the agent reads",
    }  # fmt: skip

    def dataset_columns(self, task: Any) -> dict[str, Any]:
        """The instance's browsable columns (its request's structure, the trajectory's size)."""
        ask = task.instruction
        return {"split": task.split, "difficulty": task.difficulty,
                "departure_city": ask.departure_city, "destination_city": ask.destination_city,
                "days": ask.days, "travellers": ask.travellers, "budget_cny": ask.budget_cny,
                "actions": len(task.trajectory), "request": ask.text}  # fmt: skip
