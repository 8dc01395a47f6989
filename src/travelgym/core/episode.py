"""The fields every suite's episode shares: one line of a run's ``episodes.jsonl``.

A suite's episode model derives from :class:`EpisodeBase` and adds its own fields (COMPASS:
turns of a conversation; Behavior2Trip: agent steps). The run store, the resume logic and the
exports read only these shared fields, so they never need to know the suite.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from travelgym.llm.protocol import Usage

#: The format_version of every suite's episode lines (2: ``outcome``, ``cause``, ``user_usage``;
#: a line of format 1 is upgraded by :func:`travelgym.core.outcomes.add_outcome`).
EPISODE_FORMAT = "2"


class EpisodeBase(BaseModel):
    """What every episode records: who ran which task, how it ended, usage and its score.

    ``suite`` and ``format_version`` say how the line is read back (the suite's model at that
    version); ``(task_id, trial)`` identifies the episode within its run directory.
    """

    format_version: str = EPISODE_FORMAT
    episode_id: str
    suite: str
    task_id: str
    trial: int = 0
    agent: str
    seed: int = 0
    messages: list[dict[str, Any]] = Field(default_factory=list)  # the agent's chat, if any
    termination: str
    error: str | None = None
    # how the metrics read the ending (travelgym.core.outcomes): None on episodes saved before
    # outcomes existed, whose outcome is inferred from ``termination`` and ``error``
    outcome: Literal["completed", "model_error", "infra_error"] | None = None
    cause: str | None = None  # of a model or infra error: whose call failed and its category
    usage: Usage = Field(default_factory=Usage)  # the agent's model calls
    user_usage: Usage = Field(default_factory=Usage)  # a simulated user's model calls
    llm_calls: int = 0
    duration_s: float = 0.0
    score: dict[str, Any] | None = None
    repairs: dict[str, int] = Field(default_factory=dict)  # repairs of each kind, all turns
