"""Behavior2Trip's side of training: its reward (paper Section 4.2) and the format-only warm-up
reward, its episodes as training chats (SFT export), the SFT filter, the chat view of
:class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv` for rollouts, the compact prompt
for small models and the texts of the tiny model's tokenizer. The shared layer
(:mod:`travelgym.training`) reaches them through the training methods of
:class:`~travelgym.suites.behavior2trip.suite.Behavior2TripSuite`.

**Reward**::

    R_total = P_action + R_format * (R_C + R_UPC)

- ``P_action`` = -1 when the episode had any invalid action (a malformed action, a tool call or
  memory operation whose response carried an error), else 0; 0 with ``penalty=False``.
- ``R_format`` in {0, 1}: the gate. With ``gate="format"`` (default) it is 1 when a plan was
  delivered and the Format check (``format.json``) passed; with ``gate="delivered"`` when a plan
  was delivered (every day with its required slots, checks version 4). A plan with an
  inauthentic or repeated item fails every check (``checks.credit``), ``format.json`` included,
  so it earns ``P_action`` alone, like an undelivered one.
- ``R_C`` = passed / applicable commonsense checks, ``R_UPC`` = passed / applicable
  personalisation checks (both in [0, 1], from
  :class:`~travelgym.suites.behavior2trip.scoring.InstanceResult`). When no check of a group
  applies (an Easy profile may state no checkable preference), the group is vacuously
  satisfied: 1 for a delivered plan, 0 otherwise. This matches the UPC macro metric, where such
  an answer passes; within a GRPO group (one instance) it is a constant and does not change the
  advantages.

So R_total lies in [-1, 2]; an undeliverable plan gets exactly ``P_action``.

**Format (warm-up) reward** (``--reward format``): a small model rarely writes a valid B2T
action at first, so every rollout of a GRPO group gets the same ``R_total`` (``P_action = -1``)
and the advantages are zero: nothing is learnt. The format reward grades each assistant message
of the episode: 1.0 when it holds an action (tool call, memory operation or answer) and no
invalid action; 0.5 when it holds a parsed action but also an invalid one; 0.25 when it opens an
action block (``<tool_call>``, ``<memory>``, ``<answer>``) that does not parse; 0 otherwise; and
adds ``R_format``. The total is the mean message grade plus ``R_format``, in [0, 2].

**Chats** (B2T text format): the agent's messages when it kept them, else rebuilt from its
steps: the B2T-Agent prompt and task message; each step with tool calls one assistant message
(its note as ``<think>``, its calls as parallel ``<tool_call>`` blocks) answered by a user
message of ``<tool_response>`` blocks (the calls replayed on the run's database); the plan an
``<answer>`` message.

**Compact prompt** (``--prompt compact``): the full prompt of
:func:`~travelgym.suites.behavior2trip.agents.b2t_agent.system_prompt` (Figure 11: the plan format
and every tool's JSON schema) is about 4,000 tokens, and the behaviour trajectory another 1,000
or more: a forward pass of a 135M model over it takes about a minute on two CPU cores. The
compact prompt keeps the action format, lists the tools as one-line signatures and shows one
example message; the task message keeps the last :data:`COMPACT_TRAJECTORY` actions of the
trajectory and the instruction. The environment is unchanged (same tools, parser, checks and
reward): only what the model reads is shorter. See ``docs/training/grpo.md``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel

from travelgym.suites.behavior2trip.scoring import InstanceResult
from travelgym.training.chat import ReplayError, check_replay

Gate = Literal["format", "delivered"]
SFT_MIN_SCORE = 1.0  # a delivered plan that passes the Format gate and scores R_total >= 1
FORMAT_CHECK = "format.json"
INVALID_ACTION_PENALTY = -1.0


class RewardBreakdown(BaseModel):
    """The parts of a Behavior2Trip reward: ``total = p_action + r_format * (r_c + r_upc)``."""

    total: float
    p_action: float
    r_format: float
    r_c: float
    r_upc: float
    r_plan: float  # r_format * (r_c + r_upc)
    invalid_actions: int
    delivered: bool
    c_passed: int = 0
    c_applicable: int = 0
    upc_passed: int = 0
    upc_applicable: int = 0
    upc_vacuous: bool = False  # no personalisation check applied
    penalty: bool = True
    gate: Gate = "format"


def _fraction(passed: int, applicable: int, delivered: bool) -> float:
    if applicable:
        return passed / applicable
    return 1.0 if delivered else 0.0


def b2t_reward(
    result: InstanceResult | dict[str, Any] | None,
    invalid_actions: int = 0,
    *,
    penalty: bool = True,
    gate: Gate = "format",
) -> RewardBreakdown:
    """The Behavior2Trip reward of a scored answer (``None``: nothing delivered, nothing known
    of the checks) and the episode's count of invalid actions; see the module docstring."""
    if gate not in ("format", "delivered"):
        raise ValueError(f"unknown gate {gate!r}: use 'format' or 'delivered'")
    if isinstance(result, dict):
        result = InstanceResult.model_validate(result)
    p_action = INVALID_ACTION_PENALTY if penalty and invalid_actions > 0 else 0.0
    if result is None:
        return RewardBreakdown(total=p_action, p_action=p_action, r_format=0.0, r_c=0.0,
                               r_upc=0.0, r_plan=0.0, invalid_actions=invalid_actions,
                               delivered=False, penalty=penalty, gate=gate)  # fmt: skip
    delivered = result.delivered
    if gate == "format":
        fmt = next((c for c in result.checks if c.id == FORMAT_CHECK), None)
        r_format = 1.0 if delivered and fmt is not None and fmt.passed else 0.0
    else:
        r_format = 1.0 if delivered else 0.0
    r_c = _fraction(result.c_passed, result.c_applicable, delivered)
    r_upc = _fraction(result.upc_passed, result.upc_applicable, delivered)
    r_plan = r_format * (r_c + r_upc)
    return RewardBreakdown(
        total=p_action + r_plan, p_action=p_action, r_format=r_format, r_c=r_c, r_upc=r_upc,
        r_plan=r_plan, invalid_actions=invalid_actions, delivered=delivered,
        c_passed=result.c_passed, c_applicable=result.c_applicable,
        upc_passed=result.upc_passed, upc_applicable=result.upc_applicable,
        upc_vacuous=result.upc_applicable == 0, penalty=penalty, gate=gate,
    )  # fmt: skip


def b2t_episode_reward(
    episode: Any, *, penalty: bool = True, gate: Gate = "format"
) -> RewardBreakdown:
    """:func:`b2t_reward` of a scored
    :class:`~travelgym.suites.behavior2trip.episode.TripEpisode` (or its JSON dict): its
    ``score`` and ``invalid_actions``. An unscored episode is a ValueError."""
    get = episode.get if isinstance(episode, dict) else lambda k: getattr(episode, k)
    score = get("score")
    if score is None:
        raise ValueError(f"episode {get('episode_id')!r} has no score: score it first")
    return b2t_reward(score, int(get("invalid_actions") or 0), penalty=penalty, gate=gate)


def cut_reward(env: Any) -> RewardBreakdown:
    """The reward of a :class:`~travelgym.suites.behavior2trip.environment.TripTrainingEnv` episode
    stopped before it ended: nothing delivered, only the invalid-action penalty."""
    steps = env.tools.steps if env.tools is not None else []
    invalid = sum(len(s.invalid_actions) for s in steps)
    return b2t_reward(None, invalid, penalty=env.penalty, gate=env.gate)


# the format-only warm-up reward
ACTION_TAG = re.compile(r"<\s*(tool_call|memory|answer|result)\s*>", re.I)
VALID, PARTIAL, TAGGED = 1.0, 0.5, 0.25


def step_grade(step: Any) -> float:
    """The format grade of one recorded
    :class:`~travelgym.suites.behavior2trip.agents.base.TripStep`."""
    acted = bool(step.tool_calls or step.memory_ops or step.answer)
    if acted and not step.invalid_actions:
        return VALID
    if acted:
        return PARTIAL
    return TAGGED if ACTION_TAG.search(step.text or "") else 0.0


def format_reward(episode: Any, breakdown: dict[str, Any] | None) -> dict[str, float]:
    """``{"total", "grade", "r_format"}`` of a Behavior2Trip episode and its reward breakdown."""
    grades = [step_grade(s) for s in episode.steps]
    grade = sum(grades) / len(grades) if grades else 0.0
    r_format = float((breakdown or {}).get("r_format", 0.0))
    return {"total": grade + r_format, "grade": grade, "r_format": r_format}


# SFT export
def trip_chat(episode: Any, instance: Any = None, conn: Any = None) -> list[dict[str, Any]]:
    """The chat of a Behavior2Trip episode (B2T text format): its messages, or one rebuilt from
    its steps (``instance`` for the task message, ``conn`` to replay tool calls)."""
    if episode.messages:
        return [dict(m) for m in episode.messages]
    from travelgym.agents.b2t_format import (
        MEMORY_RESPONSE,
        TOOL_RESPONSE,
        format_memory_op,
        format_responses,
        format_tool_call,
    )
    from travelgym.suites.behavior2trip.agents.b2t_agent import initial_messages
    from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession

    if instance is None:
        raise ReplayError(f"{episode.episode_id}: rebuilding the chat needs its instance")
    replay = TripToolSession(conn, keep_results=True) if conn is not None else None
    out = initial_messages(TripRequest.of(instance))
    notes: list[str] = []
    for step in episode.steps:
        note = f"{step.text}: {step.think}" if step.think and step.text else step.think or step.text
        if note:
            notes.append(note)
        if step.answer:
            think = f"<think>{'; '.join(notes)}</think>\n" if notes else ""
            out.append({"role": "assistant", "content": think + (episode.final_answer or "")})
            break
        if not step.tool_calls and not step.memory_ops:
            continue  # a step without actions: its note goes into the next message
        blocks, responses = [], []
        for call in step.tool_calls:
            blocks.append(format_tool_call(call.name, call.arguments))
            if replay is None:
                raise ReplayError(f"{episode.episode_id}: replaying tool calls needs the database")
            record = replay.call(call.name, call.arguments, call.id)
            check_replay(episode.episode_id, call, record)
            responses.append((TOOL_RESPONSE, replay.observation_text(record)))
        for op in step.memory_ops:
            blocks.append(format_memory_op(op.action, op.key, op.value))
            responses.append((MEMORY_RESPONSE, op.response))
        think = f"<think>{'; '.join(notes)}</think>\n" if notes else ""
        notes = []
        out.append({"role": "assistant", "content": think + "\n".join(blocks)})
        out.append({"role": "user", "content": format_responses(responses)})
    return out


def sft_keep(
    episode: dict[str, Any],
    min_score: float,
    *,
    keep_failing: bool = False,
    min_c_micro: float | None = None,
    min_upc_micro: float | None = None,
) -> str | None:
    """Why a scored Behavior2Trip episode is not kept for SFT, or ``None`` to keep it:
    ``undelivered``; ``not_final`` (some applicable check failed; kept with ``keep_failing``);
    ``below_min_c_micro`` / ``below_min_upc_micro`` (the share of applicable commonsense /
    personalisation checks passed is under the minimum; no applicable check counts as all
    passed); ``below_min_score`` (R_total under ``min_score``)."""
    reward = b2t_episode_reward(episode)
    if not reward.delivered:
        return "undelivered"
    final = reward.c_passed == reward.c_applicable and reward.upc_passed == reward.upc_applicable
    if not keep_failing and not final:
        return "not_final"
    if min_c_micro is not None and reward.r_c < min_c_micro:
        return "below_min_c_micro"
    if min_upc_micro is not None and reward.r_upc < min_upc_micro:
        return "below_min_upc_micro"
    return "below_min_score" if reward.total < min_score else None


def run_instance(source: Any, instance_id: str) -> Any:
    """The instance an episode of the run ``source`` ran on, read from the run's split file
    (only the lines of this run's instances are parsed; kept in ``source.cache``)."""
    found = source.cache.get("instances")
    if found is None:
        from travelgym.suites.behavior2trip.instance_sets import run_instances

        # only this run's instances, of its own set (an unknown id is refused below)
        wanted = {e.get("instance_id", e.get("task_id")) for e in source.episodes}
        found = source.cache["instances"] = run_instances(source.manifest, source.data_dir,
                                                          wanted)  # fmt: skip
    if instance_id not in found:
        raise ReplayError(f"{source.dir}: unknown instance {instance_id!r}")
    return found[instance_id]


def sft_chat(episode: dict[str, Any], source: Any) -> tuple[list[dict[str, Any]], list[dict]]:
    """``(messages, tools)`` of a kept episode (``source``: the run, for its database and
    instances); no tools: the B2T format lists them in its system prompt."""
    from travelgym.suites.behavior2trip.trip_episode import TripEpisode

    model = TripEpisode.model_validate(episode)
    if model.messages:
        return trip_chat(model), []
    return trip_chat(model, run_instance(source, model.instance_id), source.conn), []


# rollouts
# the compact prompt
COMPACT_TRAJECTORY = 6
COMPACT_PROMPT = """You are a travel planner. Each message holds actions:
<think>short reasoning</think>
<tool_call>{{"name": "<tool>", "arguments": {{...}}}}</tool_call> (one or more){memory}
or, alone, the final plan <answer>[{{"day": 1, "date": "YYYY-MM-DD", "city": "..."}}, ...]</answer>, a JSON list with one object per day.
Results come back as <tool_response>...</tool_response>{memory_response}.
Tools: {tools}
Example message:
<think>I need hotels in Suzhou.</think>
<tool_call>{{"name": "AccommodationSearch", "arguments": {{"city": "Suzhou", "n": 3}}}}</tool_call>"""
MEMORY_LINES = ('\n<memory>{{"action": "write", "key": "<key>", "value": ...}}</memory> or '
                '<memory>{{"action": "read", "key": "<key>"}}</memory>')  # fmt: skip


def tool_signatures() -> str:
    """The Behavior2Trip tools as ``Name(required, optional=default)``, comma-separated."""
    from travelgym.suites.behavior2trip.tools import trips_registry

    registry = trips_registry()
    out = []
    for name in registry.names:
        fields = registry[name].args_model.model_fields
        params = [p if f.is_required() else f"{p}={f.default!r}" for p, f in fields.items()]
        out.append(f"{name}({', '.join(params)})")
    return ", ".join(out)


def compact_system_prompt(memory: bool = True) -> str:
    """The compact B2T-Agent system prompt (``memory=False``: no memory operations)."""
    return COMPACT_PROMPT.format(
        memory=MEMORY_LINES.format() if memory else "",
        memory_response=" and <memory_response>...</memory_response>" if memory else "",
        tools=tool_signatures(),
    )


def compact_messages(messages: list[dict[str, Any]], env: Any) -> list[dict[str, Any]]:
    """A ``prompt_fn`` for :func:`~travelgym.training.rollout.run_rollout` on a ``TripTrainingEnv``:
    the compact system prompt and the task with the trajectory's last actions."""
    from travelgym.suites.behavior2trip.agents.base import TripRequest
    from travelgym.suites.behavior2trip.agents.prompts import user_message

    request = TripRequest.of(env.instance)
    short = request.model_copy(update={"trajectory": request.trajectory[-COMPACT_TRAJECTORY:]})
    return [{"role": "system", "content": compact_system_prompt(env.memory_enabled)},
            {"role": "user", "content": user_message(short)}]  # fmt: skip


def tiny_texts() -> list[str]:
    """Behavior2Trip's texts for the tiny model's tokenizer: the B2T-Agent prompts and example
    messages (tool calls, memory, answers), so that the action syntax gets merged into few
    tokens."""
    from travelgym.suites.behavior2trip.agents.b2t_agent import system_prompt
    from travelgym.suites.behavior2trip.tools import trips_registry

    texts = [system_prompt(True), system_prompt(False)]
    for name in trips_registry().names:
        call = json.dumps({"name": name, "arguments": {"city": "Beijing", "n": 3}})
        texts.append(f"<think>I need {name} results.</think>\n<tool_call>{call}</tool_call>")
        texts.append(
            f"<tool_response>{json.dumps({'city': 'Beijing', 'count': 3})}</tool_response>"
        )
    texts.append('<memory>{"action": "write", "key": "preferences", "value": {"budget": 3000}}'
                 '</memory>\n<memory>{"action": "read", "key": "preferences"}</memory>')  # fmt: skip
    texts.append('<memory_response>{"preferences": {"budget": 3000}}</memory_response>')
    texts.append('<answer>[{"day": 1, "date": "2025-10-01", "city": "Beijing"}]</answer>')
    return texts
