"""A COMPASS turn agent (:class:`~travelgym.suites.compass.agents.base.Agent`: the scripted
baselines, the code agent) as a policy of the one episode loop, :func:`travelgym.runner.loop.play`.
"""

from __future__ import annotations

from typing import Any

from travelgym.runner.loop import Action, PolicyAgent
from travelgym.suites.compass.agents.base import Agent


class TurnPolicy:
    """Plays ``agent`` over :class:`~travelgym.suites.compass.environment.CompassTrainingEnv`.

    Bound to the episode's environment, the agent starts on the environment's own tool session
    (:meth:`~travelgym.suites.compass.environment.CompassTrainingEnv.seat`), so its tool calls
    are recorded in the episode's turns. Each act is one agent turn: the agent answers the
    user's latest message (with the user's dialogue acts of it when the agent reads them) and
    its :class:`~travelgym.suites.compass.agents.base.AgentReply` is the action, which the
    environment records as it is and hands to the user."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.env: Any = None

    def bind(self, env: Any) -> None:
        self.env = env
        env.seat(self.agent)

    async def act(self, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]] | None) -> Action:  # fmt: skip
        if self.env is None:
            raise RuntimeError("a turn policy acts only once bound to an episode's environment")
        acts = self.env.user_acts() if self.agent.reads_dialogue_acts else []
        return Action(await self.agent.reply(messages[-1]["content"], acts))


def turn_agent(agent: Agent) -> PolicyAgent:
    """``agent`` as the loop plays it: a :class:`TurnPolicy` of one action per user turn,
    keeping its tool calls' results unless it reads the user's dialogue acts (the scripted
    baselines, whose episodes record the calls without their results)."""
    return PolicyAgent(TurnPolicy(agent), agent.name, 1,
                       {"keep_results": not agent.reads_dialogue_acts})  # fmt: skip
