"""LLM backends of the data pipeline: the behaviour role-play of Figure 9 and the profile judge
of Figure 8, through :class:`travelgym.llm.protocol.ChatClient`.

:class:`RoleplayBackend` has the interface of
:class:`~travelgym.suites.behavior2trip.behaviour.DeterministicBackend` (``agenerate(profile, pool, d)``). It
asks the model for one session at a time (one thread of the pool: a category in a city), parses
the JSON array tolerantly, adds timestamps and POI details in post-processing, and validates the
trajectory so far with :func:`~travelgym.suites.behavior2trip.behaviour.validate_trajectory`; a malformed or
rule-breaking session is asked again, and after ``max_attempts`` the trajectory is rejected
(:class:`RoleplayError`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from travelgym.llm.protocol import ChatClient, ChatMessage, Usage
from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.behaviour import Clock, make_action
from travelgym.suites.behavior2trip.behaviour_pool import CandidatePool, Thread
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.preferences import Poi
from travelgym.suites.behavior2trip.profiles import Draws, Issue, Profile, check_profile

ROLEPLAY_PROMPT = """# ROLE
You are role-playing a real user on a Chinese online travel platform (e.g., Ctrip / Fliggy). Your task is to generate a single-session behavior trajectory that authentically reflects the given user profile, as if you were genuinely browsing and exploring the platform during one visit.

# USER PROFILE
{user_profile}

# SESSION CONTEXT
Current session number: {session_id}
Session focus: {focus} in {city} (session {part} of {parts} for it)
Previous session history (for cross-session continuity): {previous_sessions}

# CANDIDATE POI POOL
## Preference-Matched POIs (aligned with the user's profile):
{matched_pois}
## Noise POIs (NOT aligned with the user's profile):
{noise_pois}

# ACTION SPACE
- "click" : The user is browsing or curious. Low commitment.
- "add_to_favorites" : The user finds the POI appealing and saves it for later.
- "book" : The user commits to the POI.

# BEHAVIORAL RULES
1. Preference Grounding: "add_to_favorites" and "book" MUST use Preference-Matched POIs only. Noise POIs MUST only receive "click" actions.
2. Behavioral Funnel: click -> add_to_favorites -> book. A POI must be clicked before it is favorited; favorited before it is booked. Most POIs stop at click.
3. Sequential Coherence:
- Within session: consecutive actions should be topically related.
- Cross-session: if previous sessions are provided, continue the established preference trajectory; do not re-book already-booked POIs; early sessions reflect broad exploration, later sessions narrow toward commitment.
4. Spatio-Temporal Consistency: POIs in one session should be geographically plausible. Decide transportation and accommodation before attractions and dining.
5. Semantic / Category Diversity: cover multiple POI categories per trajectory.
6. Noise Behavior: noise clicks should be sporadically interleaved, not clustered.
7. Realism Constraints: do NOT invent POIs outside the candidate pool. Do NOT mention preferences explicitly. Do NOT include reasoning or commentary.

# OUTPUT FORMAT
Return a JSON array for THIS SESSION ONLY. Each record:
[{{"action_type": "click" | "add_to_favorites" | "book", "poi_id": "<string from candidate pool>", "poi_name": "<string from candidate pool>"}}, ...]
Timestamps and full POI details are added automatically in post-processing."""

JUDGE_PROMPT = """Evaluate whether the following persona is reasonable:
Age: {age}
Education Background: {education}
Occupation: {occupation}
Location: {location}
Family Status: {family_status}
Sightseeing Preferences: {sightseeing_preference}
Food Preferences: {food_preference}
Hotel Preferences: {hotel_preference}
Transportation Preferences: {transportation_preference}
Evaluation criteria include but are not limited to:
1. Whether the age matches the education level (e.g., a 20-year-old PhD is unlikely; a 40-year-old with only elementary education is rare)
2. Whether the education background aligns with the occupation (e.g., someone with only a primary school education being a surgeon is unreasonable; a master's degree holder in a research or senior management role makes more sense)
3. Whether the age aligns with the family status (e.g., an 18-year-old being married with children is uncommon; a 60-year-old single person with no children may require justification)
4. Whether the occupation logically fits the location (e.g., a tech product manager is usually based in major cities; a full-time fashion influencer in a rural town would need context)
5. Whether the income level inferred from the occupation matches the stated preferences (e.g., someone earning a low income preferring luxury hotels and Michelin restaurants is inconsistent)
6. Whether the transportation preferences match the age or financial condition (e.g., a 70-year-old backpacking solo on a tight budget is uncommon; older people tend to prefer comfort and convenience)
7. Whether sightseeing/food/hotel preferences align with the overall persona (e.g., a highly educated researcher preferring trendy Instagram spots may seem off; a low-income person favoring ultra-luxury hotels may be unrealistic)
8. Whether the overall persona is logically coherent (e.g., a culturally inclined person should show that interest in their dining, travel, or accommodation preferences)
Please respond strictly in the following JSON format and do not add any extra content:
{{"reasonable": true/false, "reason": "specific reason"}}"""

ACTION_ALIASES = {
    "click": "click", "view": "click", "browse": "click",
    "add_to_favorites": "add_to_favorites", "add_to_favourites": "add_to_favorites",
    "favorite": "add_to_favorites", "favourite": "add_to_favorites",
    "add_to_favorite": "add_to_favorites", "book": "book", "booking": "book", "order": "book",
}  # fmt: skip


class RoleplayError(RuntimeError):
    """The model did not produce a valid trajectory within the allowed attempts."""


class JudgeError(RuntimeError):
    """The judge model did not produce a parseable verdict within the allowed attempts."""


# --- tolerant JSON -----------------------------------------------------------------------------


def extract_json(text: str | None) -> Any:
    """Parse the JSON a model meant to return: code fences, prose around it, trailing commas and
    a brace-less ``"key": value, ...`` object are tolerated. Raises ``ValueError`` otherwise."""
    if not text or not text.strip():
        raise ValueError("empty reply")
    body = re.sub(r"```(?:json)?", "", text).strip()
    candidates = [body]
    if body.startswith('"') and ":" in body:  # an object printed without its braces
        candidates.append("{" + body.rstrip(",") + "}")
    starts = [i for i in (body.find("["), body.find("{")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(body.rfind("]"), body.rfind("}"))
        if end > start:
            candidates.append(body[start : end + 1])
    for candidate in candidates:
        for variant in (candidate, re.sub(r",\s*([\]}])", r"\1", candidate)):
            try:
                return json.loads(variant)
            except ValueError:
                continue
    raise ValueError(f"no JSON found in reply: {text[:120]!r}")


def parse_session(text: str | None, candidates: dict[str, Poi]) -> list[tuple[str, Poi]]:
    """The (action type, POI) records of a role-play reply. Raises ``ValueError`` for malformed
    JSON, unknown action types or POIs outside the candidate pool."""
    data = extract_json(text)
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list) or not data:
        raise ValueError("the reply is not a non-empty JSON array")
    out = []
    for record in data:
        if not isinstance(record, dict):
            raise ValueError(f"record is not an object: {record!r}")
        kind = ACTION_ALIASES.get(str(record.get("action_type", "")).strip().lower())
        if kind is None:
            raise ValueError(f"unknown action_type {record.get('action_type')!r}")
        poi = candidates.get(str(record.get("poi_id", "")).strip())
        if poi is None:
            raise ValueError(f"POI {record.get('poi_id')!r} is not in the candidate pool")
        out.append((kind, poi))
    return out


# --- role-play backend -------------------------------------------------------------------------


def describe_profile(profile: Profile) -> str:
    """The profile as the role-playing model sees it (persona and preferences, no history)."""
    prefs = profile.preferences.model_dump(
        mode="json", exclude_none=True, exclude={"historical_travel_experiences"}
    )
    return json.dumps({"persona": profile.persona.model_dump(mode="json"), "preferences": prefs},
                      ensure_ascii=False)  # fmt: skip


def _poi_lines(pois: list[Poi]) -> str:
    if not pois:
        return "(none)"
    return "\n".join(
        f'- poi_id: "{p.poi_id}", poi_name: "{p.name}", type: {p.poi_type}, city: {p.city}, '
        f"labels: {', '.join(p.labels())}, price: {p.price:g} CNY"
        for p in pois
    )


def _history(actions: list[Action], limit: int = 40) -> str:
    if not actions:
        return "(none: this is the first session)"
    tail = actions[-limit:]
    return "\n" + "\n".join(
        f"- session {a.session}: {a.action_type} {a.poi_name} ({a.poi_type}, {a.city})"
        for a in tail
    )


class RoleplayBackend:
    """Behaviour trajectories written by a model role-playing the user (Figure 9), one session
    per call, post-processed with timestamps and validated."""

    def __init__(self, client: ChatClient, max_attempts: int = 3, **params: Any) -> None:
        self.client = client
        self.max_attempts = max_attempts
        self.params = params
        self.name = f"llm:{client.model}"
        self.usage = Usage()
        self.rejected = 0  # session replies rejected (malformed or rule-breaking)

    def prompt(self, profile: Profile, thread: Thread, session: int, part: int, parts: int,
               history: list[Action], noise: list[Poi]) -> str:  # fmt: skip
        return ROLEPLAY_PROMPT.format(
            user_profile=describe_profile(profile), session_id=session, focus=thread.focus,
            city=thread.city, part=part, parts=parts, previous_sessions=_history(history),
            matched_pois=_poi_lines(thread.matched), noise_pois=_poi_lines(noise),
        )  # fmt: skip

    async def agenerate(self, profile: Profile, pool: CandidatePool, d: Draws) -> list[Action]:
        clock = Clock(d, len({t.city for t in pool.threads}))
        actions: list[Action] = []
        session = 0
        last_city = None
        for thread in pool.threads:
            parts = 1 if len(thread.matched) <= 3 else 2
            for part in range(1, parts + 1):
                session += 1
                new_block = thread.city != last_city
                last_city = thread.city
                actions = await self._session(profile, pool, thread, session, part, parts,
                                              actions, clock, new_block)  # fmt: skip
                if any(a.session == session and a.action_type == "book" for a in actions):
                    break  # the thread is decided: no more exploring it
        problems = validate_trajectory(actions, pool)
        if problems:
            raise RoleplayError(f"{profile.profile_id}: invalid trajectory: {problems[:3]}")
        return actions

    async def _session(self, profile, pool, thread, session, part, parts, history, clock,
                       new_block) -> list[Action]:  # fmt: skip
        noise_used = sum(1 for a in history if pool.by_id[a.poi_id][1])
        noise = thread.noise if noise_used < pool.max_noise else []
        candidates = {p.poi_id: p for p in (*thread.matched, *noise)}
        text = self.prompt(profile, thread, session, part, parts, history, noise)
        messages = [ChatMessage(role="user", content=text)]
        errors = []
        saved = (clock.day, clock.t)
        for _ in range(self.max_attempts):
            response = await self.client.complete(messages, **self.params)
            self.usage = self.usage + response.usage
            try:
                steps = parse_session(response.message.content, candidates)
            except ValueError as exc:
                errors.append(str(exc))
                self.rejected += 1
                continue
            clock.day, clock.t = saved
            clock.session(new_block)
            actions = history + [
                make_action(session, kind, clock.tick(kind), poi) for kind, poi in steps
            ]
            problems = validate_trajectory(actions, pool, partial=True)
            if not problems:
                return actions
            errors.append("; ".join(problems[:3]))
            self.rejected += 1
        raise RoleplayError(f"{profile.profile_id} session {session}: rejected replies: {errors}")


# --- profile judge (Figure 8) ------------------------------------------------------------------


class Verdict(BaseModel):
    reasonable: bool
    reason: str


def _join(values) -> str:
    return ", ".join(values) if values else "no particular preference"


def judge_fields(profile: Profile) -> dict[str, Any]:
    """The Figure 8 template fields of a profile."""
    p, prefs = profile.persona, profile.preferences
    a, r = prefs.attraction_preferences, prefs.dining_requirements
    h, t = prefs.hotel_preferences, prefs.transportation_preferences
    sights = _join(a.preferred_attraction_types) + (f"; walking {a.walking_tolerance}" if a and a.walking_tolerance else "") if a else _join(None)  # fmt: skip
    food = _join([*r.cuisine_preferences, *(x for x in (r.price_level, r.dining_environment) if x)]) if r else _join(None)  # fmt: skip
    hotel = _join([*h.star_requirement, *h.essential_facilities]) if h else _join(None)
    transport = _join([x for x in (t.intercity_transport, t.intracity_transport, t.seat_class) if x]) if t else _join(None)  # fmt: skip
    return {"age": p.age, "education": p.education, "occupation": p.occupation,
            "location": p.home_city, "family_status": p.family_status,
            "sightseeing_preference": sights, "food_preference": food,
            "hotel_preference": hotel, "transportation_preference": transport}  # fmt: skip


def parse_verdict(text: str | None) -> Verdict:
    """``{"reasonable": bool, "reason": str}`` from a judge reply (tolerant); ``ValueError``
    when it is not there."""
    data = extract_json(text)
    if not isinstance(data, dict) or "reasonable" not in data:
        raise ValueError("no 'reasonable' field in the verdict")
    value = data["reasonable"]
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        value = value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise ValueError(f"'reasonable' is not a boolean: {value!r}")
    return Verdict(reasonable=value, reason=str(data.get("reason", "")))


class LLMProfileJudge:
    """The Figure 8 profile filter with a model; malformed replies are asked again."""

    def __init__(self, client: ChatClient, max_attempts: int = 3, **params: Any) -> None:
        self.client = client
        self.max_attempts = max_attempts
        self.params = params
        self.usage = Usage()

    async def judge(self, profile: Profile) -> Verdict:
        content = JUDGE_PROMPT.format(**judge_fields(profile))
        messages = [ChatMessage(role="user", content=content)]
        errors = []
        for _ in range(self.max_attempts):
            response = await self.client.complete(messages, **self.params)
            self.usage = self.usage + response.usage
            try:
                return parse_verdict(response.message.content)
            except ValueError as exc:
                errors.append(str(exc))
        raise JudgeError(
            f"{profile.profile_id}: no verdict after {self.max_attempts} replies: {errors}"
        )


async def filter_profile(profile: Profile, judge: LLMProfileJudge | None = None) -> list[Issue]:
    """The rule-based issues of :func:`check_profile`, then (when they pass and a judge is given)
    the model's verdict as an ``llm_judge`` issue."""
    issues = check_profile(profile)
    if issues or judge is None:
        return issues
    verdict = await judge.judge(profile)
    return [] if verdict.reasonable else [Issue(rule="llm_judge", reason=verdict.reason)]
