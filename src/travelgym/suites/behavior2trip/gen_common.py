"""Small helpers shared by the Behavior2Trip generator modules."""

from __future__ import annotations

import math
import re
import zlib

import numpy as np


def rng(seed: int, *component: str) -> np.random.Generator:
    """The generator of one component (e.g. ``("hotels", "Beijing")``) under ``seed``."""
    return np.random.default_rng([seed, zlib.crc32("/".join(component).encode())])


def city_slug(name: str) -> str:
    """``"Xi'an"`` -> ``"xian"``: the ``city_id`` of a city."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def allocate(total: int, weights: list[float], minimum: int = 0) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (largest remainder)."""
    spare = total - minimum * len(weights)
    raw = [spare * w / sum(weights) for w in weights]
    counts = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: spare - sum(counts)]:
        counts[i] += 1
    return [c + minimum for c in counts]


def offset(lat: float, lon: float, km: float, bearing: float) -> tuple[float, float]:
    """The point ``km`` away from (lat, lon) in direction ``bearing`` (radians), 5 decimals."""
    dlat = km / 111.0 * math.cos(bearing)
    dlon = km / (111.0 * math.cos(math.radians(lat))) * math.sin(bearing)
    return round(lat + dlat, 5), round(lon + dlon, 5)
