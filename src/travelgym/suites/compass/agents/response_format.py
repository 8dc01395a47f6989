"""The agent response format (COMPASS Appendix G.1/G.3): a JSON object with a user-visible
message and a formal recommendation of package IDs, parsed tolerantly."""

from __future__ import annotations

import json
import re
from typing import Any

FORMAT_INSTRUCTIONS = """Always answer the user with ONE JSON object and nothing else:
{"message": "<what the user reads>",
 "recommendation": {"hotel": "<pkg_... or null>", "flight": "<flight_... or null>", "permit": "<permit_... or null>"}}
Set "recommendation" to null while you are still gathering information. When you recommend,
give one complete itinerary (the package IDs you validated with the recommend_* tools). When the
trip needs only a hotel (no flights, no permit), you may instead offer up to 3 hotel options as a
list, "hotel": ["pkg_...", "pkg_..."]; the best of them counts."""

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def parse_reply(text: str | None) -> tuple[str, dict[str, Any] | None, str | None]:
    """(message, recommendation or None, error or None) from a model's final text."""
    if not text or not text.strip():
        return "", None, "empty reply"
    candidate = _json_object(text)
    if candidate is None:
        return text.strip(), None, "reply is not the required JSON object"
    message = candidate.get("message")
    message = message if isinstance(message, str) else text.strip()
    rec = candidate.get("recommendation")
    if rec is None:
        return message, None, None
    if not isinstance(rec, dict):
        return message, None, "recommendation must be an object of package IDs"
    clean = {k: rec.get(k) for k in ("hotel", "flight", "permit")}
    if not any(isinstance(v, (str, list)) and v for v in clean.values()):
        return message, None, None
    return message, clean, None


def _json_object(text: str) -> dict[str, Any] | None:
    fenced = _FENCE.search(text)
    sources = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        sources.append(text[start : end + 1])
    for source in sources:
        try:
            value = json.loads(source)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None
