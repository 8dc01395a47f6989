"""The text an agent reads for a tool call's result: the payload as JSON, cut to a length."""

from __future__ import annotations

import json
from typing import Any


def observation_json(payload: Any, max_chars: int, cut_note: str) -> str:
    """``payload`` as JSON (non-ASCII text kept as is), cut after ``max_chars`` characters with
    ``cut_note`` appended to say so."""
    text = json.dumps(payload, default=str, ensure_ascii=False)
    if len(text) > max_chars:
        text = text[:max_chars] + cut_note
    return text
