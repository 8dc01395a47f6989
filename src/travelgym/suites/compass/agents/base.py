"""What every agent implements: start an episode, then answer each user turn."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from travelgym.llm.protocol import Repair, Usage
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.trajectory import DialogueAct


@dataclass
class AgentReply:
    text: str
    recommendation: dict[str, Any] | None = None
    usage: Usage = field(default_factory=Usage)
    llm_calls: int = 0
    error: str | None = None
    repairs: list[Repair] = field(default_factory=list)  # repaired in the turn's model replies

    def to_openai(self) -> dict[str, Any]:
        """The reply as the assistant message of a chat, in the JSON response format."""
        said = {"message": self.text, "recommendation": self.recommendation}
        return {"role": "assistant", "content": json.dumps(said, ensure_ascii=False)}


class Agent(Protocol):
    name: str
    reads_dialogue_acts: bool  # True only for oracle-NLU scripted baselines

    def start(self, env: CompassToolSession) -> None:
        """Begin an episode with this environment."""
        ...

    async def reply(self, user_text: str, acts: list[DialogueAct]) -> AgentReply:
        """Answer one user turn (tool calls go through the environment and are recorded)."""
        ...

    def transcript(self) -> list[dict[str, Any]]:
        """The agent's chat messages so far (empty for agents without a chat)."""
        ...
