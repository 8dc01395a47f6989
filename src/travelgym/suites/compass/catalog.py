"""Vocabularies the generator draws from: brands, lodge names, room types, rate plans, permits.

These are plain lists of realistic values, kept as data in ``catalog.json`` beside this module;
which hotel gets which is decided by the seeded generator in ``generate.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

_TABLES = json.loads(Path(__file__).with_name("catalog.json").read_text(encoding="utf-8"))

# (brand, lowest star, highest star)
BRANDS: tuple[tuple[str, int, int], ...] = tuple(map(tuple, _TABLES["brands"]))
LODGE_WORDS: tuple[str, ...] = tuple(_TABLES["lodge_words"])
LODGE_PREFIXES: tuple[str, ...] = tuple(_TABLES["lodge_prefixes"])

# (room_type, bed_configuration, bed_type, max_occupancy, size_sqm, price_factor, kitchenette)
ROOM_TYPES: tuple[tuple[str, str, str, int, int, float, int], ...] = tuple(
    map(tuple, _TABLES["room_types"])
)

# (rate_name, cancellation_policy, meal_plan, prepayment, price_factor)
RATE_PLANS: tuple[tuple[str, str, str, str, float], ...] = tuple(map(tuple, _TABLES["rate_plans"]))

# (park_id, template_name, permit_type, description)
PERMITS: tuple[tuple[str, str, str, str], ...] = tuple(map(tuple, _TABLES["permits"]))
