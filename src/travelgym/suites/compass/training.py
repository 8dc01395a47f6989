"""COMPASS's side of training: its reward, its episodes as training chats (SFT export), the
SFT filter, the prompted-chat view of :class:`~travelgym.suites.compass.environment.CompassTrainingEnv`
for rollouts and the texts of the tiny model's tokenizer. The shared layer
(:mod:`travelgym.training`) reaches them through the training methods of
:class:`~travelgym.suites.compass.suite.CompassSuite`.

**Reward**: 0 for no plan or an infeasible one; a feasible plan gets ``0.5 + 0.5 * q`` where the
quality ``q`` in [0, 1] is, when the score carries the exact rank (``rank_percentile``), 1 for an
optimal plan and ``1 - rank / |X_feas|`` otherwise (the worst feasible plan gets 0.5); without a
rank, the optimality tiers: optimal 1, top 5 % 0.75, top 10 % 0.5, top 20 % 0.25, else 0.
See ``docs/training/rewards.md``.

**Chats**: LLM agents store their chat (``messages``) and it is used as it is. A scripted
agent's chat is rebuilt from its turns: the LLM agent's system prompt; each user turn a user
message; each tool call an assistant message with that one call, answered by its tool message
(the scripted search is sequential: every call may depend on the previous results; calls whose
results were not kept are replayed, in order, on the run's database); the agent's words and
recommendation a final assistant message in the JSON response format.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from travelgym.suites.compass.scoring import PlanScore
from travelgym.training.chat import ReplayError, arguments_text, check_replay

SFT_MIN_SCORE = 0.5  # any feasible plan
FEASIBLE_REWARD = 0.5
# without an exact rank: (flag, quality), best first; "optimal" is PlanScore.optimal
TIER_QUALITY: tuple[tuple[str, float], ...] = (
    ("optimal", 1.0),
    ("5", 0.75),
    ("10", 0.5),
    ("20", 0.25),
)


class CompassReward(BaseModel):
    """A COMPASS reward: ``total = 0`` when infeasible, else ``0.5 + 0.5 * quality``."""

    total: float
    feasible: bool
    quality: float  # in [0, 1]; 0 when infeasible
    basis: Literal["infeasible", "rank", "tiers"]
    optimal: bool = False
    rank: int | None = None
    rank_percentile: float | None = None


def _tier_quality(score: PlanScore) -> float:
    for flag, quality in TIER_QUALITY:
        if score.optimal if flag == "optimal" else score.top.get(flag, False):
            return quality
    return 0.0


def compass_reward(score: PlanScore | dict[str, Any] | None) -> CompassReward:
    """The COMPASS reward of a :class:`~travelgym.suites.compass.scoring.PlanScore` (``None``:
    no plan); see the module docstring for the shaping."""
    if isinstance(score, dict):
        score = PlanScore.model_validate(score)
    if score is None or not score.feasible:
        return CompassReward(total=0.0, feasible=False, quality=0.0, basis="infeasible")
    if score.rank_percentile is not None:
        basis = "rank"
        quality = 1.0 if score.optimal else max(0.0, 1.0 - score.rank_percentile / 100.0)
    else:
        basis, quality = "tiers", _tier_quality(score)
    return CompassReward(total=FEASIBLE_REWARD + (1.0 - FEASIBLE_REWARD) * quality,
                         feasible=True, quality=quality, basis=basis, optimal=score.optimal,
                         rank=score.rank, rank_percentile=score.rank_percentile)  # fmt: skip


def compass_episode_reward(episode: Any) -> CompassReward:
    """:func:`compass_reward` of a scored COMPASS
    :class:`~travelgym.suites.compass.trajectory.Episode` (or its JSON dict). An unscored
    episode is a ValueError."""
    get = episode.get if isinstance(episode, dict) else lambda k: getattr(episode, k)
    score = get("score")
    if score is None:
        raise ValueError(f"episode {get('episode_id')!r} has no score: score it first")
    return compass_reward(score)


def compass_tools(agent: str) -> list[dict[str, Any]]:
    """The tool schemas a COMPASS agent was given (the code agent has only ``run_python``)."""
    if agent.startswith("code:"):
        from travelgym.suites.compass.agents.code_agent import RUN_PYTHON_SCHEMA

        return [RUN_PYTHON_SCHEMA]
    from travelgym.suites.compass.tools import compass_registry

    return compass_registry().openai_schemas()


def compass_chat(episode: Any, conn: Any = None) -> list[dict[str, Any]]:
    """The OpenAI chat of a COMPASS episode: its transcript, or one rebuilt from its turns
    (``conn``: the run's database, needed when tool results were not kept)."""
    if episode.messages:
        return [dict(m) for m in episode.messages]
    from travelgym.agents.tool_calling import tool_message_content
    from travelgym.suites.compass.agents.llm_agent import SYSTEM_PROMPT
    from travelgym.suites.compass.env import CompassToolSession

    replay = CompassToolSession(conn, keep_results=True) if conn is not None else None
    out: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    for turn in episode.turns:
        if turn.role == "user":
            out.append({"role": "user", "content": turn.text})
            continue
        for i, call in enumerate(turn.tool_calls):
            if call.parent is not None:
                continue  # made by the code of a run_python call, not by the model
            record = call
            if call.result is None and call.ok:
                if replay is None:
                    raise ReplayError(f"{episode.episode_id}: tool results were not kept; "
                                      "replaying them needs the run's database")  # fmt: skip
                record = replay.call(call.name, call.arguments, call.id)
                check_replay(episode.episode_id, call, record)
            elif replay is not None:  # keep the tools' episode state (notebook) in step
                replay.call(call.name, call.arguments, call.id)
            call_id = f"call_{turn.index}_{i}"
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {
                    "name": call.name, "arguments": arguments_text(call.arguments)}}]})  # fmt: skip
            out.append({"role": "tool", "tool_call_id": call_id,
                        "content": tool_message_content(record)})  # fmt: skip
        if turn.error and not turn.text and turn.recommendation is None:
            continue  # a failed turn said nothing
        reply = {"message": turn.text, "recommendation": turn.recommendation}
        out.append({"role": "assistant", "content": json.dumps(reply, ensure_ascii=False)})
    return out


def sft_keep(episode: dict[str, Any], min_score: float) -> str | None:
    """Why a scored COMPASS episode is not kept for SFT (``infeasible``, ``below_min_score``),
    or ``None`` to keep it."""
    reward = compass_episode_reward(episode)
    if not reward.feasible:
        return "infeasible"
    return "below_min_score" if reward.total < min_score else None


def sft_chat(episode: dict[str, Any], source: Any) -> tuple[list[dict[str, Any]], list[dict]]:
    """``(messages, tools)`` of a kept episode (``source``: the run, for its database)."""
    from travelgym.suites.compass.trajectory import Episode

    model = Episode.model_validate(episode)
    messages = compass_chat(model, None if model.messages else source.conn)
    return messages, compass_tools(model.agent)


def tiny_texts() -> list[str]:
    """COMPASS's texts for the tiny model's tokenizer: the LLM agent's prompt, the prompted
    tool instructions, example tool calls and a reply, the shipped tasks."""
    from travelgym.llm.prompted_tools import tools_instructions
    from travelgym.suites.compass.agents.llm_agent import SYSTEM_PROMPT
    from travelgym.suites.compass.tasks import PACKAGE_TASKS as tasks
    from travelgym.suites.compass.tools import compass_registry

    texts = [SYSTEM_PROMPT, tools_instructions(compass_registry().openai_schemas())]
    for name in compass_registry().names:
        body = json.dumps({"name": name, "arguments": {"location": "Yosemite"}})
        texts.append(f"<tool_call>\n{body}\n</tool_call>")
    texts.append('{"message": "Here is my plan.", "recommendation": {"hotel": "pkg_1_2_5_1", '
                 '"flight": "flight_3_2_5", "permit": null}}')  # fmt: skip
    if tasks.exists():
        texts += tasks.read_text(encoding="utf-8").splitlines()
    return texts
