"""User profiles at three difficulties, and the Figure 8 consistency filter as explicit rules.

Easy activates one preference category, Medium two or three (mean 2.4), Hard all four (Table 2's
1.0 / 2.4 / 4.0). A persona (age, education, occupation, home city, family status) is drawn from
broad distributions and the preferences loosely from the persona's income; :func:`check_profile`
then rejects the inconsistent combinations (Figure 8's eight criteria plus age vs occupation), and
:func:`sample_profile` redraws until a profile passes. The LLM judge of Figure 8 is
:class:`travelgym.suites.behavior2trip.roleplay.LLMProfileJudge`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.preferences import (
    CATEGORIES,
    MODE_SEATS,
    AttractionPreferences,
    City,
    DiningRequirements,
    HotelPreferences,
    Preferences,
    TransportationPreferences,
)

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
EDUCATION = ("Primary School", "Junior High School", "High School", "Vocational College",
             "Bachelor's Degree", "Master's Degree", "PhD")  # fmt: skip
# youngest age at which each education level is normally completed
EDUCATION_MIN_AGE = dict(zip(EDUCATION, (12, 15, 18, 20, 22, 24, 27), strict=True))
PRIMARY_ONLY_MIN_AGE = 50  # "a 40-year-old with only elementary education is rare"
FAMILY_STATUS = ("Single", "Married, no children", "Married with young children",
                 "Married with adult children", "Widowed")  # fmt: skip
TIER1 = ("Beijing", "Shanghai", "Guangzhou", "Shenzhen")
MAJOR_CITIES = TIER1 + ("Chengdu", "Chongqing", "Hangzhou", "Xi'an", "Nanjing", "Suzhou", "Wuhan",
                        "Changsha", "Tianjin", "Qingdao", "Xiamen", "Dalian", "Kunming", "Harbin")  # fmt: skip
INCOME = ("low", "middle", "high")


@dataclass(frozen=True)
class Occupation:
    """What an occupation implies: education range, income, ages, where it is plausible."""

    min_edu: int
    max_edu: int
    income: int  # index into INCOME
    min_age: int
    max_age: int
    location: str = "any"  # "any", "major" (major cities only) or "not_tier1"


OCCUPATIONS: dict[str, Occupation] = {
    "Undergraduate Student": Occupation(2, 2, 0, 18, 24),
    "Graduate Student": Occupation(4, 5, 0, 22, 32),
    "Software Engineer": Occupation(4, 6, 2, 22, 55, "major"),
    "Tech Product Manager": Occupation(4, 5, 2, 24, 50, "major"),
    "Financial Analyst": Occupation(4, 6, 2, 23, 55, "major"),
    "Senior Executive": Occupation(4, 6, 2, 35, 65, "major"),
    "Fashion Influencer": Occupation(2, 4, 1, 18, 40, "major"),
    "Surgeon": Occupation(5, 6, 2, 27, 65),
    "University Researcher": Occupation(6, 6, 1, 27, 65),
    "Professor": Occupation(6, 6, 2, 32, 70),
    "Lawyer": Occupation(4, 6, 2, 24, 70),
    "High School Teacher": Occupation(4, 5, 1, 22, 60),
    "Civil Servant": Occupation(4, 5, 1, 22, 60),
    "Accountant": Occupation(3, 5, 1, 21, 60),
    "Nurse": Occupation(3, 4, 1, 20, 60),
    "Graphic Designer": Occupation(3, 5, 1, 20, 50),
    "Sales Representative": Occupation(2, 4, 1, 20, 55),
    "Small Business Owner": Occupation(1, 5, 1, 25, 70),
    "Restaurant Chef": Occupation(1, 3, 1, 18, 60),
    "Tour Guide": Occupation(2, 4, 0, 20, 55),
    "Factory Worker": Occupation(1, 3, 0, 18, 60),
    "Delivery Rider": Occupation(1, 3, 0, 18, 50),
    "Farmer": Occupation(0, 2, 0, 25, 75, "not_tier1"),
    "Retiree": Occupation(0, 6, 1, 55, 85),
}
Education = Literal[EDUCATION]  # type: ignore[valid-type]
FamilyStatus = Literal[FAMILY_STATUS]  # type: ignore[valid-type]
OccupationName = Literal[tuple(OCCUPATIONS)]  # type: ignore[valid-type]

# spending tier (0 frugal .. 3 luxury) of each priced preference value
STAR_TIER = {"2-Star & Below/Economy": 0, "3-Star/Comfort": 1, "City Homestay": 1,
             "4-Star/Upscale": 2, "5-Star/Luxury": 3}  # fmt: skip
PRICE_TIER = dict(zip(vocab.PRICE_LEVELS, range(4), strict=True))
SEAT_TIER = {"Economy Class": 1, "Second Class Seat": 0, "First Class Seat": 2, "Business Class": 3}
STAR_ORDER = ("2-Star & Below/Economy", "3-Star/Comfort", "4-Star/Upscale", "5-Star/Luxury")
STRENUOUS_TYPES = ("Outdoor Adventure", "Ice/Snow Sports", "Water Activities")
ELDERLY_AGE = 65


class Persona(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    age: int = Field(ge=18, le=85)
    education: Education
    occupation: OccupationName
    home_city: City
    family_status: FamilyStatus


class Profile(BaseModel):
    """A hidden user profile: persona, preferences (Table 9) and difficulty."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    profile_id: str
    difficulty: Difficulty
    persona: Persona
    preferences: Preferences

    @property
    def categories(self) -> list[str]:
        return self.preferences.categories

    @property
    def income(self) -> str:
        return INCOME[OCCUPATIONS[self.persona.occupation].income]


class Issue(BaseModel):
    """One violated consistency rule and why."""

    model_config = ConfigDict(frozen=True)
    rule: str
    reason: str


# --- seeded draws -----------------------------------------------------------------------------


class Draws:
    """Scalar draws from a seeded numpy generator; uniforms come in blocks for speed."""

    def __init__(self, rng: np.random.Generator, block: int = 256) -> None:
        self.rng = rng
        self.block = block
        self._buf: list[float] = []

    def random(self) -> float:
        if not self._buf:
            self._buf = self.rng.random(self.block).tolist()[::-1]
        return self._buf.pop()

    def randint(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]``."""
        return lo + min(int(self.random() * (hi - lo + 1)), hi - lo)

    def choice(self, seq: Sequence):
        return seq[min(int(self.random() * len(seq)), len(seq) - 1)]

    def weighted(self, seq: Sequence, weights: Sequence[float]):
        u = self.random() * sum(weights)
        for item, w in zip(seq, weights, strict=True):
            u -= w
            if u < 0:
                return item
        return seq[-1]

    def sample(self, seq: Sequence, k: int) -> list:
        """``k`` distinct items in random order (partial Fisher-Yates)."""
        items = list(seq)
        k = min(k, len(items))
        for i in range(k):
            j = i + min(int(self.random() * (len(items) - i)), len(items) - i - 1)
            items[i], items[j] = items[j], items[i]
        return items[:k]

    def shuffle(self, items: list) -> None:
        items[:] = self.sample(items, len(items))


def rng_for(seed: int, *parts: object) -> Draws:
    """Draws keyed by ``(seed, parts)`` via ``zlib.crc32``: independent per component."""
    return Draws(np.random.default_rng([seed, *(zlib.crc32(str(p).encode()) for p in parts)]))


# --- the consistency filter (Figure 8) -----------------------------------------------------------


def _spend_tiers(prefs: Preferences) -> dict[str, int]:
    tiers = {}
    if prefs.hotel_preferences:
        tiers["hotel"] = max(STAR_TIER[s] for s in prefs.hotel_preferences.star_requirement)
    if prefs.dining_requirements and prefs.dining_requirements.price_level:
        tiers["dining"] = PRICE_TIER[prefs.dining_requirements.price_level]
    if prefs.transportation_preferences and prefs.transportation_preferences.seat_class:
        tiers["seat"] = SEAT_TIER[prefs.transportation_preferences.seat_class]
    return tiers


def rule_age_education(p: Profile) -> str | None:
    age, edu = p.persona.age, p.persona.education
    if age < EDUCATION_MIN_AGE[edu]:
        return f"a {age}-year-old is too young to hold a {edu}"
    if edu == "Primary School" and age < PRIMARY_ONLY_MIN_AGE:
        return f"only primary education at {age} is rare"
    return None


def rule_education_occupation(p: Profile) -> str | None:
    occ = OCCUPATIONS[p.persona.occupation]
    level = EDUCATION.index(p.persona.education)
    if level < occ.min_edu:
        return f"a {p.persona.occupation} needs at least {EDUCATION[occ.min_edu]}"
    if level > occ.max_edu:
        return f"a {p.persona.education} holder working as a {p.persona.occupation} is implausible"
    return None


def rule_age_occupation(p: Profile) -> str | None:
    occ = OCCUPATIONS[p.persona.occupation]
    if not occ.min_age <= p.persona.age <= occ.max_age:
        return f"a {p.persona.age}-year-old {p.persona.occupation} is implausible"
    return None


def rule_age_family(p: Profile) -> str | None:
    age, fam = p.persona.age, p.persona.family_status
    if fam.startswith("Married") and age < 22:
        return f"married at {age} is uncommon"
    if fam == "Married with young children" and age > 55:
        return f"young children at {age} need justification"
    if fam == "Married with adult children" and age < 42:
        return f"adult children at {age} are implausible"
    if fam == "Widowed" and age < 45:
        return f"widowed at {age} is uncommon"
    if fam == "Single" and age >= 60:
        return f"single with no children at {age} needs justification"
    return None


def rule_occupation_location(p: Profile) -> str | None:
    occ, city = OCCUPATIONS[p.persona.occupation], p.persona.home_city
    if occ.location == "major" and city not in MAJOR_CITIES:
        return f"a {p.persona.occupation} is usually based in a major city, not {city}"
    if occ.location == "not_tier1" and city in TIER1:
        return f"a {p.persona.occupation} living in {city} is implausible"
    return None


def rule_income_preferences(p: Profile) -> str | None:
    tiers = {k: v for k, v in _spend_tiers(p.preferences).items() if k != "seat"}
    income = OCCUPATIONS[p.persona.occupation].income
    luxury = [k for k, v in tiers.items() if v >= 3]
    upscale = [k for k, v in tiers.items() if v >= 2]
    if income == 0 and (luxury or len(upscale) >= 2):
        return f"a low income ({p.persona.occupation}) with {'luxury' if luxury else 'upscale'} {' and '.join(luxury or upscale)} tastes"
    if income == 1 and len(luxury) >= 2:
        return f"a middle income with luxury {' and '.join(luxury)} preferences"
    return None


def rule_transport_age_finances(p: Profile) -> str | None:
    t = p.preferences.transportation_preferences
    a = p.preferences.attraction_preferences
    old = p.persona.age >= ELDERLY_AGE
    if t is not None:
        if old and t.intercity_transport == "Long-distance Bus":
            return f"a {p.persona.age}-year-old would prefer comfort to long-distance buses"
        if old and t.intracity_transport == "Walking":
            return f"a {p.persona.age}-year-old getting around town on foot is uncommon"
        income = OCCUPATIONS[p.persona.occupation].income
        if t.seat_class and SEAT_TIER[t.seat_class] >= 2 and income == 0:
            return f"{t.seat_class} travel on a low income is inconsistent"
    if old and a is not None and a.walking_tolerance == "High (5km+)":
        return f"a {p.persona.age}-year-old walking 5 km+ a day is uncommon"
    return None


def rule_preferences_persona(p: Profile) -> str | None:
    a = p.preferences.attraction_preferences
    if a is None:
        return None
    strenuous = [t for t in a.preferred_attraction_types if t in STRENUOUS_TYPES]
    if strenuous and p.persona.age >= ELDERLY_AGE:
        return f"{', '.join(strenuous)} at {p.persona.age} is unlikely"
    return None


def rule_overall_coherence(p: Profile) -> str | None:
    prefs = p.preferences
    h, t = prefs.hotel_preferences, prefs.transportation_preferences
    if h is not None:
        ranks = [STAR_ORDER.index(s) for s in h.star_requirement if s in STAR_ORDER]
        if ranks and max(ranks) - min(ranks) > 1:
            return f"star requirements {h.star_requirement} are not one standard"
    if t is not None and t.seat_class and t.seat_class not in MODE_SEATS[t.intercity_transport]:
        return f"{t.seat_class} does not exist on {t.intercity_transport}"
    tiers = _spend_tiers(prefs)
    if tiers and max(tiers.values()) - min(tiers.values()) > 2:
        return f"spending levels clash across {', '.join(tiers)}"
    return None


RULES = {
    "age_education": rule_age_education,
    "education_occupation": rule_education_occupation,
    "age_family": rule_age_family,
    "occupation_location": rule_occupation_location,
    "income_preferences": rule_income_preferences,
    "transport_age_finances": rule_transport_age_finances,
    "preferences_persona": rule_preferences_persona,
    "overall_coherence": rule_overall_coherence,
    "age_occupation": rule_age_occupation,
}


def check_profile(profile: Profile) -> list[Issue]:
    """Every consistency rule the profile breaks (``[]``: reasonable)."""
    out = []
    for name, rule in RULES.items():
        reason = rule(profile)
        if reason:
            out.append(Issue(rule=name, reason=reason))
    return out


# --- sampling ----------------------------------------------------------------------------------

CATEGORY_COUNTS = {"easy": ((1,), (1.0,)), "medium": ((2, 3), (0.6, 0.4)), "hard": ((4,), (1.0,))}
# An Easy profile states its one category's key attribute only, so exactly one preference check
# applies (its request states no budget): the paper's Table 3 has UPC micro = macro in every Easy
# row. Intracity transport has no check and stays.
EASY_DROPPED: dict[str, dict] = {
    "hotel_preferences": {"essential_facilities": []},
    "attraction_preferences": {"walking_tolerance": None},
    "dining_requirements": {"price_level": None, "dining_environment": None},
    "transportation_preferences": {"seat_class": None},
}
AGES = ((18, 24), (25, 34), (35, 44), (45, 54), (55, 64), (65, 80))
AGE_WEIGHTS = (0.15, 0.3, 0.24, 0.15, 0.1, 0.06)
MAX_ATTEMPTS = 500


def sample_persona(d: Draws) -> Persona:
    lo, hi = d.weighted(AGES, AGE_WEIGHTS)
    age = d.randint(lo, hi)
    fitting = [n for n, o in OCCUPATIONS.items() if o.min_age <= age <= o.max_age]
    occupation = d.choice(fitting if d.random() < 0.85 else tuple(OCCUPATIONS))
    occ = OCCUPATIONS[occupation]
    # mostly inside the occupation's education range, sometimes anywhere (the filter decides)
    edu = d.randint(occ.min_edu, occ.max_edu) if d.random() < 0.85 else d.randint(0, 6)
    if occ.location == "major" and d.random() < 0.8:
        city = d.choice(MAJOR_CITIES)
    else:
        city = d.choice(vocab.CITIES)
    if age < 26:
        family = d.weighted(FAMILY_STATUS, (0.8, 0.12, 0.06, 0.0, 0.02))
    elif age < 45:
        family = d.weighted(FAMILY_STATUS, (0.25, 0.25, 0.45, 0.03, 0.02))
    elif age < 60:
        family = d.weighted(FAMILY_STATUS, (0.05, 0.15, 0.25, 0.5, 0.05))
    else:
        family = d.weighted(FAMILY_STATUS, (0.04, 0.1, 0.02, 0.7, 0.14))
    return Persona(age=age, education=EDUCATION[edu], occupation=occupation, home_city=city,
                   family_status=family)  # fmt: skip


def _tier_pick(d: Draws, options: Sequence[str], tiers: dict[str, int], cap: int):
    """Mostly an option whose spending tier is at most ``cap``; sometimes any."""
    allowed = [o for o in options if tiers[o] <= cap]
    return d.choice(allowed if allowed and d.random() < 0.9 else options)


def sample_hotel(d: Draws, cap: int) -> HotelPreferences:
    first = _tier_pick(d, vocab.STAR_LEVELS, STAR_TIER, cap)
    stars = [first]
    if first in STAR_ORDER and d.random() < 0.35:
        i = STAR_ORDER.index(first)
        stars.append(STAR_ORDER[i + 1] if i + 1 < len(STAR_ORDER) else STAR_ORDER[i - 1])
    k = d.weighted((0, 1, 2), (0.3, 0.5, 0.2))
    facilities = d.sample(vocab.FACILITIES, k)
    return HotelPreferences(star_requirement=stars, essential_facilities=facilities)


def sample_attraction(d: Draws, age: int) -> AttractionPreferences:
    types = d.sample(vocab.ATTRACTION_TYPES, d.weighted((1, 2, 3), (0.35, 0.45, 0.2)))
    walking = d.weighted(
        vocab.WALKING_TOLERANCE, (0.5, 0.35, 0.15) if age >= 60 else (0.3, 0.4, 0.3)
    )
    return AttractionPreferences(preferred_attraction_types=types, walking_tolerance=walking)


def sample_dining(d: Draws, cap: int) -> DiningRequirements:
    cuisines = d.sample(vocab.CUISINES, d.weighted((1, 2), (0.55, 0.45)))
    price = _tier_pick(d, vocab.PRICE_LEVELS, PRICE_TIER, cap)
    env = d.choice(vocab.DINING_ENVIRONMENTS) if d.random() < 0.7 else None
    return DiningRequirements(cuisine_preferences=cuisines, price_level=price, dining_environment=env)  # fmt: skip


def sample_transport(d: Draws, cap: int) -> TransportationPreferences:
    mode = d.weighted(vocab.INTERCITY_TRANSPORT, (0.42, 0.13, 0.4, 0.05))
    seats = MODE_SEATS[mode]
    seat = None
    if seats and d.random() < 0.9:
        seat = _tier_pick(d, seats, SEAT_TIER, max(cap, 1)) if d.random() < 0.95 else d.choice(vocab.SEAT_CLASSES)  # fmt: skip
    return TransportationPreferences(
        intercity_transport=mode, intracity_transport=d.choice(vocab.INTRACITY_TRANSPORT), seat_class=seat
    )  # fmt: skip


def sample_preferences(d: Draws, persona: Persona, difficulty: str) -> Preferences:
    """Active categories for the difficulty; values loosely follow the persona's income."""
    counts, weights = CATEGORY_COUNTS[difficulty]
    active = d.sample(CATEGORIES, d.weighted(counts, weights))
    cap = OCCUPATIONS[persona.occupation].income + 1  # low -> tier <= 1, middle -> 2, high -> 3
    fields = {}
    if "hotel_preferences" in active:
        fields["hotel_preferences"] = sample_hotel(d, cap)
    if "attraction_preferences" in active:
        fields["attraction_preferences"] = sample_attraction(d, persona.age)
    if "dining_requirements" in active:
        fields["dining_requirements"] = sample_dining(d, cap)
    if "transportation_preferences" in active:
        fields["transportation_preferences"] = sample_transport(d, cap)
    if difficulty == "easy":
        fields = {c: section.model_copy(update=EASY_DROPPED[c]) for c, section in fields.items()}
    return Preferences(**fields)


def sample_profile(
    d: Draws, profile_id: str, difficulty: str, stats: dict | None = None
) -> Profile:
    """Draw until a profile passes :func:`check_profile`; ``stats`` counts rejections by rule."""
    for _ in range(MAX_ATTEMPTS):
        persona = sample_persona(d)
        prefs = sample_preferences(d, persona, difficulty)
        profile = Profile(profile_id=profile_id, difficulty=difficulty, persona=persona,
                          preferences=prefs)  # fmt: skip
        issues = check_profile(profile)
        if stats is not None:
            stats["drawn"] = stats.get("drawn", 0) + 1
            for issue in issues:
                stats[issue.rule] = stats.get(issue.rule, 0) + 1
        if not issues:
            return profile
    raise RuntimeError(f"no consistent profile after {MAX_ATTEMPTS} draws ({profile_id})")
