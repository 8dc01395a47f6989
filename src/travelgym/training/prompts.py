"""A compact B2T-Agent prompt for small models and CPU runs (``--prompt compact``).

The full prompt of :func:`~travelgym.suites.behavior2trip.agents.b2t_agent.system_prompt` (Figure 11: the plan
format and every tool's JSON schema) is about 4,000 tokens, and the behaviour trajectory another
1,000 or more: a forward pass of a 135M model over it takes about a minute on two CPU cores. The
compact prompt keeps the action format (``<think>``, ``<tool_call>``, ``<memory>``,
``<answer>``), lists the tools as one-line signatures and shows one example message; the task message keeps the last
:data:`COMPACT_TRAJECTORY` actions of the trajectory and the instruction. The environment is
unchanged (same tools, parser, checks and reward): only what the model reads is shorter. A
model trained on it is evaluated with the full prompt by ``travelgym run``; see
``docs/training/grpo.md``.
"""

from __future__ import annotations

from typing import Any

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
    """A ``prompt_fn`` for :func:`~travelgym.training.rollout.run_rollout` on a ``TripEnv``:
    the compact system prompt and the task with the trajectory's last actions."""
    from travelgym.suites.behavior2trip.agents.base import TripRequest
    from travelgym.suites.behavior2trip.agents.prompts import user_message

    request = TripRequest.of(env.instance)
    short = request.model_copy(update={"trajectory": request.trajectory[-COMPACT_TRAJECTORY:]})
    return [{"role": "system", "content": compact_system_prompt(env.memory_enabled)},
            {"role": "user", "content": user_message(short)}]  # fmt: skip
