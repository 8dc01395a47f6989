"""The LLM backend of the automatic quality control: Figure 10's prompt (in our words) over
the trajectory, the stated preferences, the request and the plan with its check results; the
model replies with one JSON object (three 0/1 scores, their reasons, an operation code and,
for ``correct_preference``, the corrected preferences). A reply that cannot be read is retried,
then recorded as an error (``operation`` ``None``); a failed call is recorded the same way.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from travelgym.llm.protocol import ChatClient, ChatMessage, LLMError
from travelgym.suites.behavior2trip.instances import Instance
from travelgym.suites.behavior2trip.plan_json import extract_json
from travelgym.suites.behavior2trip.quality import CRITERIA, OPERATIONS, Criterion, QCRecord

QC_PROMPT = """You review the quality of one travel-user record: a behaviour trajectory (what the user clicked, favourited and booked), the preferences stated in the user's profile, a trip request and a plan for it. Score each of three criteria 0 or 1 and choose one operation code.

# Criteria
1. completeness (trajectory completeness): 1 when the trajectory is a clear chain from browsing to a final decision (several kinds of action: clicks, favourites, bookings) and ends with bookings; 0 when it is single-patterned (only a few clicks), has no final decision or the chain is broken or illogical.
2. clarity (preference clarity): 1 when the key behaviours (favourites, bookings) agree with the stated preferences and every stated preference shows in the behaviour; 0 when key behaviours conflict with the stated preferences or have nothing to do with them.
3. constraints (the plan meets the constraints): 1 when the plan satisfies the request and the preferences (the rule checks below help); 0 when it clearly conflicts with them or has nothing to do with them.

# Operation codes
- no_action: the record is good; change nothing.
- correct_preference: the behaviour conflicts with the stated preferences; give the corrected preferences (same JSON shape as the stated ones, the same categories) that the behaviour supports.
- mark_incomplete: the trajectory lacks a final decision; mark it.
- delete: the record is too poor to fix.

# Trajectory ({n_actions} actions; session, action, POI type, city, labels)
{trajectory}

# Stated preferences
{preferences}

# Request
{request}

# Plan ({plan_source})
{plan}

# Rule checks the plan fails
{failures}

Reply with one JSON object only, no other text:
{{"scores": {{"completeness": 0 or 1, "clarity": 0 or 1, "constraints": 0 or 1}}, "reasons": {{"completeness": "...", "clarity": "...", "constraints": "..."}}, "operation": "no_action" | "correct_preference" | "mark_incomplete" | "delete", "corrected_preferences": {{...}} or null}}"""


def trajectory_text(instance: Instance, limit: int = 120) -> str:
    """One line per action (the first ``limit``)."""
    rows = [f"{a.session} {a.action_type} {a.poi_type} {a.city}: {', '.join(a.categories)}"
            for a in instance.trajectory[:limit]]  # fmt: skip
    if len(instance.trajectory) > limit:
        rows.append(f"... {len(instance.trajectory) - limit} more actions")
    return "\n".join(rows)


def stated_preferences(instance: Instance) -> dict[str, Any]:
    """The stated preferences as JSON, without the history of bookings."""
    return instance.profile.preferences.model_dump(
        mode="json", exclude={"historical_travel_experiences"}
    )


def qc_messages(instance: Instance, plan: str | None, source: str,
                failures: list[str]) -> list[ChatMessage]:  # fmt: skip
    """The single user message of the QC prompt."""
    prompt = QC_PROMPT.format(
        n_actions=len(instance.trajectory), trajectory=trajectory_text(instance),
        preferences=json.dumps(stated_preferences(instance), ensure_ascii=False),
        request=instance.instruction.text, plan_source=source, plan=plan or "(no plan)",
        failures="\n".join(failures) if failures else "(none)",
    )  # fmt: skip
    return [ChatMessage(role="user", content=prompt)]


def _score(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise ValueError(f"a score must be 0 or 1, not {value!r}")


def parse_reply(text: str | None) -> dict[str, Any]:
    """Scores, reasons, operation and corrected preferences from a reply. Raises ``ValueError``
    on anything else (no JSON object, a missing or non-0/1 score, an unknown code, a
    ``correct_preference`` without preferences)."""
    try:
        value = extract_json(text or "")
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    scores, reasons = value.get("scores"), value.get("reasons") or {}
    if not isinstance(scores, dict) or not isinstance(reasons, dict):
        raise ValueError("no 'scores' object in the reply")
    out: dict[str, Any] = {}
    for c in CRITERIA:
        if c not in scores:
            raise ValueError(f"no score for {c}")
        out[c] = Criterion(score=_score(scores[c]), reason=str(reasons.get(c, "")))
    code = re.sub(r"[\s-]+", "_", str(value.get("operation", "")).strip().lower())
    if code not in OPERATIONS:
        raise ValueError(f"unknown operation code {value.get('operation')!r}")
    out["operation"] = code
    corrected = value.get("corrected_preferences")
    if code == "correct_preference":
        if not isinstance(corrected, dict) or not corrected:
            raise ValueError("correct_preference without corrected_preferences")
        out["corrected_preferences"] = corrected
    return out


class LLMJudge:
    """The LLM backend: ``client`` answers the QC prompt; ``pdb`` lists the checks a plan fails
    (the model sees them, as the paper's annotators saw the plan)."""

    def __init__(self, client: ChatClient, model: str, pdb: Any, attempts: int = 2) -> None:
        self.client, self.pdb, self.attempts = client, pdb, max(1, attempts)
        self.name = f"llm:{model}"

    async def assess(self, instance: Instance, chain_plan: str | None = None,
                     has_chain: bool = False) -> QCRecord:  # fmt: skip
        """The record of one instance; never raises for a model's failure."""
        from travelgym.suites.behavior2trip.witness import witness_failures

        source = "chain" if has_chain else ("witness" if instance.witness else "none")
        plan = chain_plan if has_chain else instance.witness
        if plan is not None and "<answer>" in plan:
            plan = plan.split("<answer>", 1)[1].split("</answer>", 1)[0]
        failures = witness_failures(instance, plan, self.pdb) if plan is not None else []
        base = {"instance_id": instance.instance_id, "split": instance.split,
                "difficulty": instance.difficulty, "backend": self.name, "plan_source": source}  # fmt: skip
        messages = qc_messages(instance, plan, source, failures)
        error = "no attempt"
        for _ in range(self.attempts):
            try:
                reply = await self.client.complete(messages)
            except LLMError as exc:
                return QCRecord(**base, error=f"QC call failed: {exc}")
            except Exception as exc:  # noqa: BLE001 - a model's failure never stops the control
                return QCRecord(**base, error=f"QC call failed: {type(exc).__name__}: {exc}")
            try:
                return QCRecord(**base, **parse_reply(reply.message.content))
            except ValueError as exc:
                error = f"malformed QC reply: {exc}"
        return QCRecord(**base, error=error)


async def assess_all(judge: Any, instances: list[Instance], chains: dict[str, str | None],
                     has_chains: bool, concurrency: int = 4) -> list[QCRecord]:  # fmt: skip
    """Records of ``instances`` in their order (``chains``: instance id -> the chain's plan)."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(x: Instance) -> QCRecord:
        async with gate:
            return await judge.assess(x, chains.get(x.instance_id), has_chains)

    return list(await asyncio.gather(*(one(x) for x in instances)))
