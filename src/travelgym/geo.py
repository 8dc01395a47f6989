"""Great-circle distances and the driving-time model shared by the database and the tools."""

from __future__ import annotations

import math

EARTH_RADIUS_KM = 6371.0088
KM_PER_MILE = 1.609344
# Roads are longer than the great circle; 1.3 is a common detour index for US rural roads.
ROAD_DETOUR_FACTOR = 1.3
# Average door-to-door driving speed including small roads and park entrances.
DRIVING_SPEED_KMH = 85.0


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres between two points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def driving_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Estimated road distance in kilometres (great circle times the detour factor)."""
    return haversine_km(lat1, lon1, lat2, lon2) * ROAD_DETOUR_FACTOR


def driving_hours(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Estimated driving time in hours between two coordinates."""
    return driving_km(lat1, lon1, lat2, lon2) / DRIVING_SPEED_KMH


def format_hours(hours: float) -> str:
    """Format hours as ``'2h 15m'``."""
    total = int(round(hours * 60))
    return f"{total // 60}h {total % 60:02d}m"
