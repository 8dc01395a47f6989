"""The score summary of a run directory: its stored episodes read strictly and summarised by
:func:`travelgym.core.summary.summarize_episodes` (the suite's metrics, the outcome counts,
usage and pass^k). Here, not in ``core``: reading a run directory is the runner's job, and core
imports nothing above it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from travelgym.core.summary import summarize_episodes
from travelgym.runner.store import EPISODES, read_manifest, read_run


def summarize_run(suite: Any, run_dir: Path) -> dict[str, Any]:
    """The summary of the episodes of ``run_dir`` (read strictly; none yet: an empty summary)
    with its manifest, for ``suite`` (a :class:`~travelgym.core.suite.Suite`)."""
    if not (Path(run_dir) / EPISODES).exists():
        return summarize_episodes(suite, [], read_manifest(run_dir))
    run = read_run(run_dir, suite.name, as_dicts=True)
    return summarize_episodes(suite, run.episodes, run.manifest)


def score_answers(suite: Any, answers: Path, seed: int, data_dir: Path | None, notes: list[str],
                  options: Any = None, base_url: str | None = None) -> dict[str, Any]:  # fmt: skip
    """``suite.score`` of an answers file or a run directory; a run directory whose stored
    scores stand (the suite returns ``None``) is summarised as it is."""
    result = suite.score(answers, seed, data_dir, notes, options=options, base_url=base_url)
    return result if result is not None else summarize_run(suite, answers)
