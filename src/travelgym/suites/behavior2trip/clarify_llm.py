"""RQ1's LLM user: a model plays the traveller from the hidden profile and answers one
clarification question at a time, told to answer only what is asked. A model error or an
unusable reply (empty, or a reply that tries to act as the planner) becomes a
:class:`~travelgym.suites.behavior2trip.clarify.ClarifyError`, which the ``AskUser`` call
returns as an error: the episode goes on."""

from __future__ import annotations

import json
import re
from typing import Any

from travelgym.llm.protocol import Usage
from travelgym.suites.behavior2trip.clarify import TOPICS, ClarifyError, profile_values

MAX_ANSWER_CHARS = 600
PROMPT = """You are a traveller talking to a travel planner who is preparing your trip. Your travel preferences are below (the planner cannot see them).

# Your preferences
{preferences}

# Rules
- Answer ONLY what the planner's question asks about, in one or two short sentences, with the values above.
- Never mention a preference the question does not ask about, even if it seems helpful.
- If the question asks about something you have no preference for, say you have no particular preference.
- If the question is vague (it names no specific preference), ask the planner to ask about a specific preference.
- Your budget, dates and party size are already in your request: do not repeat or change them.
- Reply with the answer only: no tags, no JSON, no plan."""
TAGS = re.compile(r"<think>.*?</think>", re.S)
ACTING = re.compile(r"<(answer|tool_call|memory)\b|\bAction\s*:", re.I)


def preference_lines(profile: Any) -> str:
    """The profile's preferences, one topic a line (``none`` where it has no value)."""
    lines = []
    for topic, (label, _, _) in TOPICS.items():
        values = profile_values(profile, topic)
        lines.append(f"- {label}: {'; '.join(values) if values else 'no particular preference'}")
    return "\n".join(lines)


def user_messages(profile: Any, question: str, history: list[Any]) -> list[dict[str, str]]:
    """The chat the LLM user answers: the profile prompt, the earlier answered exchanges and
    the new question."""
    messages = [{"role": "system", "content": PROMPT.format(preferences=preference_lines(profile))}]
    for exchange in history:
        if exchange.answer is not None:
            messages += [{"role": "user", "content": exchange.question},
                         {"role": "assistant", "content": exchange.answer}]  # fmt: skip
    messages.append({"role": "user", "content": question})
    return messages


def clean_reply(text: str | None) -> str:
    """The usable answer in a model's reply (reasoning tags dropped, cut at
    :data:`MAX_ANSWER_CHARS`); raises :class:`ClarifyError` when there is none."""
    if not isinstance(text, str):
        raise ClarifyError("the user model sent no text")
    answer = TAGS.sub("", text).strip()
    if answer.startswith("{"):  # a JSON object wrapping the answer
        try:
            answer = str(json.loads(answer).get("answer", "")).strip()
        except (ValueError, AttributeError):
            raise ClarifyError("the user model sent unreadable JSON") from None
    if not answer:
        raise ClarifyError("the user model sent an empty reply")
    if ACTING.search(answer):
        raise ClarifyError("the user model replied as a planner (tags or actions), not as a user")
    return answer[:MAX_ANSWER_CHARS]


async def llm_answer(client: Any, profile: Any, question: str,
                     history: list[Any]) -> tuple[str, Usage]:  # fmt: skip
    """The LLM user's answer to ``question`` and the usage of its call (raises
    :class:`ClarifyError` on an unusable reply, and an
    :class:`~travelgym.core.outcomes.InfraError` when the user's model call fails for good: that
    ends the episode as no fault of the agent's)."""
    from travelgym.core.outcomes import InfraError
    from travelgym.llm.protocol import ChatMessage, LLMError

    messages = [ChatMessage.model_validate(m) for m in user_messages(profile, question, history)]
    try:
        response = await client.complete(messages)
    except LLMError as exc:
        raise InfraError(f"user {exc.category}", f"the simulated user's model: {exc}") from None
    return clean_reply(response.message.content), response.usage
