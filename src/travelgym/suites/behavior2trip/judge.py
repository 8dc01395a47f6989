"""The LLM-judge pass rate (paper Section 5.1, "LLM"): a model grades each delivered plan
against a rubric, tolerating the output variations the rule-based checks do not.

The judge sees the request, the hidden preferences and the plan (canonical JSON when it parsed)
and answers ``{"pass": true|false, "reason": "..."}``. A reply that cannot be read (after
``attempts`` tries) or a failed model call is recorded as a judge error (``passed`` is ``None``),
never raised. The rubric is documented in ``docs/behavior2trip/metrics.md``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from travelgym.llm.protocol import ChatClient, ChatMessage, LLMError
from travelgym.suites.behavior2trip.instances import Instance
from travelgym.suites.behavior2trip.plan_json import extract_json
from travelgym.suites.behavior2trip.plan_parse import parse_plan

JUDGE_PROMPT = """You are a strict but fair reviewer of personalized travel plans. Decide whether the travel plan below is acceptable for this user.

# User request
{instruction}

# Trip facts
From {departure} to {destination}, {start_date} to {end_date} ({days} days), {travellers} traveller(s), {budget}.

# The user's preferences (inferred from their past behaviour; the planner did not see this list)
{preferences}

# Travel plan
{plan}

# Rubric: the plan passes only if ALL of these hold
1. Completeness: one entry per day of the trip; intercity transport to the destination on the first day and back on the last day; breakfast, lunch and dinner every day; at least one attraction every day (at most 4); a hotel for every night; weather and city information.
2. Feasibility: times are realistic (activities roughly 09:00-21:00, no travel between 23:00 and 06:00, meals at meal times, no overlapping activities, no idle gaps of more than 2 hours, hotel check-in in the evening, no sightseeing after arriving in a city after 18:00, local transport of at most about 2 hours a day and about 1 hour between attractions); no restaurant is repeated.
3. Personalization: hotels, attractions, restaurants and intercity transport follow the user's preferences listed above (star level, facilities, attraction types, walking, cuisine, price level, dining environment, transport mode, seat class), and the total cost for the whole party stays within the budget (when one is stated).
4. Information: every item names the place and gives times and prices; descriptions or tips add useful detail.
Judge the substance, not the formatting: different key names, wording or layout are fine. You cannot check a database, so do not fail a plan for place names you do not recognise unless they are clearly invented.

Respond with a JSON object only, no other text:
{{"pass": true or false, "reason": "one or two sentences"}}"""


class JudgeVerdict(BaseModel):
    """The judge's decision on one plan; ``passed`` is ``None`` when the judge failed."""

    passed: bool | None
    reason: str = ""
    error: str | None = None


def describe_preferences(instance: Instance) -> str:
    """The hidden preferences as JSON (without the history of past bookings)."""
    prefs = instance.profile.preferences.model_dump(
        mode="json", exclude_none=True, exclude={"historical_travel_experiences"}
    )
    return json.dumps(prefs, ensure_ascii=False, indent=1) if prefs else "(none stated)"


def judge_messages(instance: Instance, answer: str) -> list[ChatMessage]:
    """The single user message of the rubric prompt for one answer."""
    plan, _ = parse_plan(answer)
    text = json.dumps(plan.to_json(), ensure_ascii=False, indent=1) if plan else answer
    x = instance.instruction
    prompt = JUDGE_PROMPT.format(
        instruction=x.text, departure=x.departure_city, destination=x.destination_city,
        start_date=x.start_date, end_date=x.end_date, days=x.days, travellers=x.travellers,
        budget=f"budget {x.budget_cny} CNY in total" if x.budget_cny else "no budget stated",
        preferences=describe_preferences(instance), plan=text,
    )  # fmt: skip
    return [ChatMessage(role="user", content=prompt)]


def parse_verdict(text: str | None) -> JudgeVerdict:
    """Read ``{"pass": bool, "reason": str}`` from a reply. Raises ``ValueError``."""
    value = extract_json(text or "")
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    keys = {re.sub(r"\W", "", str(k).lower()): v for k, v in value.items()}
    verdict = next(
        (keys[k] for k in ("pass", "passed", "verdict", "acceptable") if k in keys), None
    )
    if isinstance(verdict, str) and verdict.strip().lower() in (
        "true",
        "pass",
        "yes",
        "false",
        "fail",
        "no",
    ):
        verdict = verdict.strip().lower() in ("true", "pass", "yes")
    if not isinstance(verdict, bool):
        raise ValueError(f"no boolean 'pass' in the reply: {str(text)[:120]!r}")
    return JudgeVerdict(passed=verdict, reason=str(keys.get("reason", "")))


async def judge_plan(client: ChatClient, instance: Instance, answer: str | None,
                     attempts: int = 2, **params: Any) -> JudgeVerdict:  # fmt: skip
    """Judge one answer; an undelivered plan fails without a model call."""
    if answer is None or parse_plan(answer)[0] is None:
        return JudgeVerdict(passed=False, reason="no plan delivered")
    messages = judge_messages(instance, answer)
    error = "no attempt"
    for _ in range(max(1, attempts)):
        try:
            reply = await client.complete(messages, **params)
        except LLMError as exc:
            return JudgeVerdict(passed=None, error=f"judge call failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - a judge's failure must never take a run down
            return JudgeVerdict(
                passed=None, error=f"judge call failed: {type(exc).__name__}: {exc}"
            )
        try:
            return parse_verdict(reply.message.content)
        except ValueError as exc:
            error = f"malformed judge reply: {exc}"
    return JudgeVerdict(passed=None, error=error)


async def judge_results(client: ChatClient, results: list, instances: Mapping[str, Instance],
                        answers: Mapping[tuple[str, int], str | None],
                        concurrency: int = 4, close: bool = False) -> None:  # fmt: skip
    """Set ``result.judge`` on every :class:`~travelgym.suites.behavior2trip.scoring.InstanceResult`
    (``answers`` maps ``(instance_id, trial)`` to the answer text); ``close``: close the client
    at the end (in this event loop, which its connections belong to)."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(result) -> None:
        async with gate:
            answer = answers.get((result.instance_id, result.trial))
            result.judge = await judge_plan(client, instances[result.instance_id], answer)

    try:
        await asyncio.gather(*(one(r) for r in results))
    finally:
        aclose = getattr(client, "aclose", None) if close else None
        if aclose is not None:
            await aclose()
