"""Calibration of the generated booking data to what the COMPASS paper reports (Appendix F.2).

Each number here is a modelling choice, documented in ``docs/compass/calibration.md`` next to the
paper's statement it reproduces. Changing any of them changes the database content hash, so bump
``GENERATOR_VERSION`` in ``generate.py`` when you do.
"""

from __future__ import annotations

import datetime as dt

YEAR, MONTH = 2025, 8
NIGHTS: tuple[dt.date, ...] = tuple(dt.date(YEAR, MONTH, d) for d in range(1, 32))
# Fri, Sat, Sun nights are "weekend" (Fig. 17: prices up, availability down).
WEEKEND_WEEKDAYS = frozenset({4, 5, 6})

# Hotels per park: 20 (the API cap) for most; fewer where lodging is scarce (Fig. 15).
HOTEL_COUNT = {
    "deva": 5,
    "ever": 4,
    "dena": 12,
    "crla": 9,
    "glac": 16,
    "olym": 17,
    "mora": 14,
    "brca": 15,
}
DEFAULT_HOTEL_COUNT = 20

# Hotel distance to the park entrance: LogNormal(median, sigma) km, capped at 95 km. Death Valley
# and Everglades have "few nearby lodging options" (Appendix F, Fig. 15 bottom right): their
# hotels sit in distant gateway towns, never within 10 km, and no in-park lodge is bookable;
# every other park has at least one hotel within 10 km (an in-park lodge or the nearest motel).
DISTANCE_MEDIAN_KM = 18.0
DISTANCE_SIGMA = 0.7
REMOTE_LODGING = {"deva": (55.0, 12.0), "ever": (48.0, 12.0)}  # park -> (median km, minimum km)
NEAR_ENTRANCE_KM = (0.5, 8.0)  # the nearest hotel of every other park
IN_PARK_LODGE_PROBABILITY = 0.6
IN_PARK_LODGE_KM = (0.5, 4.0)

# Relative nightly price level per park; Rocky Mountain is the most expensive (Fig. 15).
PRICE_INDEX = {
    "romo": 1.75,
    "yell": 1.35,
    "grte": 1.45,
    "acad": 1.30,
    "yose": 1.30,
    "glac": 1.25,
    "zion": 1.20,
    "arch": 1.10,
    "grca": 1.15,
    "dena": 1.20,
    "olym": 1.00,
    "mora": 1.00,
    "brca": 0.95,
    "deva": 1.05,
    "jotr": 0.90,
    "seki": 0.95,
    "crla": 0.90,
    "shen": 0.85,
    "grsm": 0.80,
    "ever": 0.85,
}

# Share of 4-star-and-above hotels per park (Fig. 17 right: varies from few to many).
LUXURY_SHARE = {
    "romo": 0.45,
    "yell": 0.30,
    "grte": 0.50,
    "acad": 0.40,
    "yose": 0.35,
    "glac": 0.20,
    "zion": 0.35,
    "arch": 0.25,
    "grca": 0.20,
    "dena": 0.15,
    "olym": 0.10,
    "mora": 0.10,
    "brca": 0.10,
    "deva": 0.20,
    "jotr": 0.15,
    "seki": 0.10,
    "crla": 0.05,
    "shen": 0.15,
    "grsm": 0.30,
    "ever": 0.25,
}

BASE_NIGHTLY_PRICE = 140.0  # USD, a 3-star standard room in a park of price index 1.0
STAR_PRICE_STEP = 0.28  # each star above 3 adds 28 % (and each below removes it)
WEEKEND_PRICE_FACTOR = 1.30
WEEKEND_AVAILABILITY_FACTOR = 0.45
LATE_AUGUST_FACTOR = 1.06  # after Aug 15 prices stay a little higher, availability unchanged
MEAN_ROOMS_AVAILABLE = 5.0

# Flights: ~67k+ daily leg prices. Regional airports get fewer origins and airlines (Fig. 16).
BOOKING_CLASSES = ("economy", "premium_economy", "business")
CLASS_PRICE_FACTOR = {"economy": 1.0, "premium_economy": 1.65, "business": 3.1}
CLASS_MEAN_SEATS = {"economy": 9.0, "premium_economy": 4.0, "business": 3.0}
FLIGHT_PRICE_SIGMA = 0.38  # log-normal noise: the long right tail of Fig. 16
REGIONAL_ORIGIN_SHARE = 0.6  # a regional airport is reached from ~60 % of the departure cities
MAJOR_ORIGIN_SHARE = 1.0

PERMIT_COUNT = 50
