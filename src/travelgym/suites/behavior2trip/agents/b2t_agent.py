"""B2T-Agent at inference (paper Section 4.1, Figure 11): any OpenAI-compatible chat model
acting in the structured text format (``<think>``, parallel ``<tool_call>``, ``<memory>``,
``<answer>``); no native tool calling. Observations go back in one user message per step.
Each message is applied by :func:`~travelgym.suites.behavior2trip.agents.b2t_step.apply_b2t_message`
inside the training environment: evaluation and GRPO play the same episodes."""

from __future__ import annotations

from typing import Any

from travelgym.llm.protocol import ChatClient
from travelgym.runner.loop import ChatPolicy, PolicyAgent
from travelgym.suites.behavior2trip.agents.base import DEFAULT_MAX_STEPS, TripRequest
from travelgym.suites.behavior2trip.agents.prompts import plan_format, tool_listing, user_message

PROMPT = """You are a seasoned travel planner with extensive experience in generating personalized plans. Your core task is to deeply understand the user's requirements, gather information by calling tools, and ultimately design a thorough and meticulous travel plan. You possess an internal dictionary-structured memory module for storing and retrieving key information. Use <memory></memory> to wrap any operation that reads or writes session memory using "action": "read" or "write" with a "key" (and optional "value" for write). After gathering all necessary information and crafting the complete plan, please wrap the final itinerary in JSON format between the "<answer>" and "</answer>" tags. Note: The delivered travel plan must be complete, covering every day of the trip. Please note that the final output should be a JSON list (array) that includes all travel days. Each day is an independent JSON object that follows the same internal structure.

# Action format
Each of your messages may contain:
- <think>your reasoning</think>
- one or more tool calls, run in parallel: <tool_call>{{"name": "<tool name>", "arguments": {{...}}}}</tool_call>
- memory operations: <memory>{{"action": "write", "key": "preferences", "value": {{...}}}}</memory> or <memory>{{"action": "read", "key": "preferences"}}</memory> (key "all" reads everything)
- or, alone in its message, the final plan: <answer>...</answer>
The results come back in the next message as <tool_response>...</tool_response> and <memory_response>...</memory_response>, in the order of your actions. Invalid actions (malformed JSON, unknown tools or parameters, reading a missing key) return an error; avoid them.

# Plan format
{plan_format}

# Tools
{tools}"""


MEMORY_SENTENCES = (
    " You possess an internal dictionary-structured memory module for storing and retrieving key "
    "information. Use <memory></memory> to wrap any operation that reads or writes session memory "
    'using "action": "read" or "write" with a "key" (and optional "value" for write).',
    '- memory operations: <memory>{{"action": "write", "key": "preferences", "value": {{...}}}}'
    '</memory> or <memory>{{"action": "read", "key": "preferences"}}</memory> (key "all" reads '
    "everything)\n",
    " and <memory_response>...</memory_response>",
    ", reading a missing key",
)


def system_prompt(memory: bool = True, ask_user: bool = False) -> str:
    """Figure 11's prompt; ``memory=False`` (the no-memory ablation) leaves out every mention of
    the ``<memory>`` module; ``ask_user`` lists RQ1's ``AskUser`` tool."""
    template = PROMPT
    if not memory:
        for sentence in MEMORY_SENTENCES:
            template = template.replace(sentence, "")
    return template.format(plan_format=plan_format(), tools=tool_listing(ask_user))


def initial_messages(request: TripRequest, memory: bool = True) -> list[dict[str, Any]]:
    """The chat an episode starts from: the system prompt and the task (trajectory and
    instruction) as the first user message."""
    ask_user = getattr(request, "ask_limit", 0) > 0  # RQ1's clarification mode
    return [{"role": "system", "content": system_prompt(memory, ask_user)},
            {"role": "user", "content": user_message(request)}]  # fmt: skip


class B2TAgent(PolicyAgent):
    """The B2T-Agent: a chat model writing B2T-format messages, played by the one episode loop
    (:func:`travelgym.runner.loop.play`) over the training environment, with a step limit and
    a key-value memory per episode (``memory=False``: the no-memory ablation, see
    :func:`system_prompt`)."""

    def __init__(self, client: ChatClient, max_steps: int = DEFAULT_MAX_STEPS,
                 memory: bool = True, **params: Any) -> None:  # fmt: skip
        super().__init__(ChatPolicy(client, **params), f"b2t:{client.model}", max_steps,
                         {"memory": memory})  # fmt: skip
        self.client, self.memory = client, memory
