"""Reading the values of a plan as agents write them: local and intercity modes, durations and
prices."""

from __future__ import annotations

import re
from typing import Any

from travelgym.suites.behavior2trip.memo import BoundedMemo

_NON_KEY = re.compile(r"[^a-z0-9]+")
KEYS_KEPT = 4096


def _key(key: object) -> str:
    """A key as the parser compares it: lower case, runs of other characters as ``_``."""
    if type(key) is not str or len(key) > 100:
        return _normal_key(str(key))
    return _KEYS[key]


def _normal_key(key: str) -> str:
    return _NON_KEY.sub("_", key.lower()).strip("_")


_KEYS = BoundedMemo(_normal_key, KEYS_KEPT)


_LOCAL_MODE_WORDS = (
    ("Ride-sharing", ("ride_sharing", "ridesharing", "ride_hailing", "didi", "rideshare")),
    ("Subway", ("subway", "metro", "underground", "line")),
    ("Walking", ("walk", "walking", "on_foot", "foot")),
    ("Taxi", ("taxi", "cab")),
    ("Transit", ("transit", "public_transport", "public_transportation")),
    ("Bus", ("bus",)),
    ("Driving", ("driving", "drive", "car", "self_drive")),
)


def local_mode(text: Any) -> str | None:
    """A local transport mode as one of :data:`LOCAL_MODES` (the raw text when unknown)."""
    if not isinstance(text, str) or not text.strip():
        return None
    if len(text) > 100:
        return _local_mode(text)
    return _MODES[text]


def _local_mode(text: str) -> str:
    key = _key(text)
    for mode, words in _LOCAL_MODE_WORDS:
        if any(key == w or key.startswith(w + "_") or f"_{w}" in key for w in words):
            return mode
    return text.strip()


_MODES = BoundedMemo(_local_mode, KEYS_KEPT)


def intercity_mode(text: Any, number: Any = None) -> str | None:
    """``flight``, ``train`` or ``bus`` from a mode text or, failing that, a service number."""
    key = _key(text) if isinstance(text, str) else ""
    for mode, words in (("flight", ("flight", "air", "plane", "airplane", "fly")),
                        ("bus", ("bus", "coach")),
                        ("train", ("train", "rail", "high_speed", "hsr", "railway"))):  # fmt: skip
        if any(w in key for w in words):
            return mode
    number = str(number or "").strip().upper()
    if re.fullmatch(r"[GDCZTK]\d{1,4}", number):
        return "train"
    if re.fullmatch(r"B\d{4}", number):
        return "bus"
    if re.fullmatch(r"[A-Z0-9]{2}\d{2,4}", number):
        return "flight"
    return None


def parse_minutes(value: Any) -> float | None:
    """Minutes of a duration: ``30``, ``"~30 min"``, ``"1h 20m"``, ``"1.5 hours"``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.lower()
    hours = re.search(r"(\d+(?:\.\d+)?)\s*(?:h|hr|hrs|hour|hours)\b", text)
    mins = re.search(r"(\d+(?:\.\d+)?)\s*(?:m|min|mins|minute|minutes)\b", text)
    if hours or mins:
        return (float(hours.group(1)) * 60 if hours else 0.0) + (
            float(mins.group(1)) if mins else 0.0
        )
    bare = re.fullmatch(r"\s*~?\s*(\d+(?:\.\d+)?)\s*", text)
    return float(bare.group(1)) if bare else None


def parse_price(value: Any) -> float | None:
    """CNY of ``275``, ``"¥275"``, ``"275 CNY"``, ``"free"``; ``None`` when no number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if re.search(r"\bfree\b", value, re.I):
            return 0.0
        m = re.search(r"\d[\d,]*(?:\.\d+)?", value)
        if m:
            return float(m.group(0).replace(",", ""))
    return None
