"""Preference schema (Table 9), POI matching, profile sampling and the Figure 8 consistency
filter (rules and the LLM judge against the local OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.llm import OpenAIChatClient
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.preferences import (
    CATEGORIES,
    AttractionPreferences,
    DiningRequirements,
    HotelPreferences,
    Poi,
    Preferences,
    TransportationPreferences,
    poi_matches,
)
from travelgym.suites.behavior2trip.profiles import (
    DIFFICULTIES,
    RULES,
    Profile,
    check_profile,
    rng_for,
    sample_profile,
)
from travelgym.suites.behavior2trip.roleplay import (
    JudgeError,
    LLMProfileJudge,
    extract_json,
    filter_profile,
    judge_fields,
    parse_verdict,
)

# --- schema ------------------------------------------------------------------------------------


def test_fourteen_attributes_in_five_dimensions():
    assert sum(len(v) for v in vocab.PREFERENCE_DIMENSIONS.values()) == 14
    for dim, attrs in vocab.PREFERENCE_DIMENSIONS.items():
        field = Preferences.model_fields[dim]
        model = next(a for a in field.annotation.__args__ if a is not type(None)) if dim in CATEGORIES else field.annotation  # fmt: skip
        assert tuple(model.model_fields) == attrs
    assert len(CATEGORIES) == 4


def test_values_are_constrained_to_the_vocabulary():
    with pytest.raises(ValidationError):
        HotelPreferences(star_requirement=["6-Star/Palace"])
    with pytest.raises(ValidationError):
        HotelPreferences(star_requirement=["5-Star/Luxury", "5-Star/Luxury"])
    with pytest.raises(ValidationError):
        HotelPreferences(star_requirement=[])
    with pytest.raises(ValidationError):
        DiningRequirements(cuisine_preferences=["Martian"], price_level=vocab.PRICE_LEVELS[0])
    with pytest.raises(ValidationError):
        TransportationPreferences(intercity_transport="Rocket")
    with pytest.raises(ValidationError):
        AttractionPreferences(
            preferred_attraction_types=["Museum/Exhibition"], walking_tolerance="Far"
        )
    schema = HotelPreferences.model_json_schema()["properties"]["star_requirement"]["items"]
    assert tuple(schema["enum"]) == vocab.STAR_LEVELS


def test_categories_and_attributes():
    prefs = Preferences(
        hotel_preferences=HotelPreferences(star_requirement=["4-Star/Upscale"]),
        transportation_preferences=TransportationPreferences(
            intercity_transport="Airplane", seat_class="Business Class"
        ),
    )
    assert prefs.categories == ["hotel_preferences", "transportation_preferences"]
    assert prefs.attributes() == [
        "hotel_preferences.star_requirement",
        "transportation_preferences.intercity_transport",
        "transportation_preferences.seat_class",
    ]
    assert prefs.poi_types() == ["hotel", "flight"]


# --- matching ----------------------------------------------------------------------------------

HOTEL = Poi(
    "H1", "Grand", "hotel", "Beijing", 900.0, "5-Star/Luxury", facilities=("Free WiFi", "Gym")
)
CHEAP = Poi(
    "H2", "Inn", "hotel", "Beijing", 150.0, "2-Star & Below/Economy", facilities=("Free WiFi",)
)
HOTPOT = Poi(
    "R1", "Hotpot", "restaurant", "Chengdu", 120.0, "Hot Pot", vocab.PRICE_LEVELS[1], "Lively"
)
HIKE = Poi("A1", "Peak", "attraction", "Huangshan", 190.0, "Natural Landscape", "High (5km+)")
MUSEUM = Poi("A2", "Museum", "attraction", "Xi'an", 0.0, "Museum/Exhibition", "Low (1-3km)")
FLIGHT = Poi("CA1-C", "Air China CA1", "flight", "Shanghai", 2100.0, "Airplane", "Business Class",
             origin="Beijing")  # fmt: skip
KTV = Poi("E1", "KTV", "entertainment", "Beijing", 90.0, "KTV")


def test_poi_matching_per_category():
    prefs = Preferences(
        hotel_preferences=HotelPreferences(star_requirement=["5-Star/Luxury"], essential_facilities=["Gym"]),
        dining_requirements=DiningRequirements(cuisine_preferences=["Hot Pot"], price_level=vocab.PRICE_LEVELS[1], dining_environment="Lively"),
        attraction_preferences=AttractionPreferences(preferred_attraction_types=["Natural Landscape", "Museum/Exhibition"], walking_tolerance="Medium (3-5km)"),
        transportation_preferences=TransportationPreferences(intercity_transport="Airplane", seat_class="Economy Class"),
    )  # fmt: skip
    assert poi_matches(prefs, HOTEL) and not poi_matches(prefs, CHEAP)
    assert poi_matches(prefs, HOTPOT)
    assert not poi_matches(prefs, HIKE)  # 5 km+ is beyond a medium walking tolerance
    assert poi_matches(prefs, MUSEUM)
    assert not poi_matches(prefs, FLIGHT)  # business, not economy
    assert poi_matches(prefs, KTV)  # entertainment has no preference attribute
    assert all(poi_matches(Preferences(), p) for p in (HOTEL, CHEAP, HOTPOT, HIKE, FLIGHT, KTV))
    assert HOTEL.labels() == ["5-Star/Luxury", "Free WiFi", "Gym"]
    assert HOTPOT.focus == "restaurant" and FLIGHT.focus == "transport"


# --- profile rules (Figure 8) ------------------------------------------------------------------

BASE = {
    "profile_id": "p",
    "difficulty": "medium",
    "persona": {"age": 34, "education": "Bachelor's Degree", "occupation": "Software Engineer",
                "home_city": "Hangzhou", "family_status": "Married with young children"},
    "preferences": {
        "hotel_preferences": {"star_requirement": ["4-Star/Upscale"], "essential_facilities": ["Gym"]},
        "attraction_preferences": {"preferred_attraction_types": ["Museum/Exhibition"],
                                   "walking_tolerance": "Medium (3-5km)"},
        "dining_requirements": {"cuisine_preferences": ["Cantonese"],
                                "price_level": "Moderate (80-150 CNY/person)"},
        "transportation_preferences": {"intercity_transport": "High-speed Rail",
                                       "intracity_transport": "Subway",
                                       "seat_class": "Second Class Seat"},
    },
}  # fmt: skip


def make(persona=None, **prefs) -> Profile:
    data = json.loads(json.dumps(BASE))
    data["persona"].update(persona or {})
    for key, value in prefs.items():
        data["preferences"][key] = value
    return Profile.model_validate(data)


# rule -> (a profile that passes it, one that fails it)
CASES = {
    "age_education": (make({"age": 27, "education": "PhD", "occupation": "University Researcher"}),
                      make({"age": 20, "education": "PhD", "occupation": "University Researcher"})),
    "education_occupation": (make({"education": "Master's Degree", "occupation": "Surgeon", "age": 40}),
                             make({"education": "Primary School", "occupation": "Surgeon", "age": 55})),
    "age_family": (make({"age": 30}), make({"age": 20, "occupation": "Factory Worker",
                                            "education": "High School"})),
    "occupation_location": (make({"home_city": "Shenzhen"}), make({"home_city": "Lijiang"})),
    "income_preferences": (
        make({"occupation": "Delivery Rider", "education": "High School"},
             hotel_preferences={"star_requirement": ["3-Star/Comfort"]},
             dining_requirements={"cuisine_preferences": ["Hot Pot"], "price_level": "Budget (30-80 CNY/person)"}),
        make({"occupation": "Delivery Rider", "education": "High School"},
             hotel_preferences={"star_requirement": ["5-Star/Luxury"]},
             dining_requirements={"cuisine_preferences": ["Hot Pot"], "price_level": "Budget (30-80 CNY/person)"})),
    "transport_age_finances": (
        make({"age": 68, "occupation": "Retiree", "family_status": "Married with adult children"},
             attraction_preferences={"preferred_attraction_types": ["Park/Square"], "walking_tolerance": "Low (1-3km)"},
             transportation_preferences={"intercity_transport": "High-speed Rail", "intracity_transport": "Taxi"}),
        make({"age": 68, "occupation": "Retiree", "family_status": "Married with adult children"},
             attraction_preferences={"preferred_attraction_types": ["Park/Square"], "walking_tolerance": "Low (1-3km)"},
             transportation_preferences={"intercity_transport": "Long-distance Bus", "intracity_transport": "Taxi"})),
    "preferences_persona": (
        make({"age": 25}, attraction_preferences={"preferred_attraction_types": ["Ice/Snow Sports"]}),
        make({"age": 70, "occupation": "Retiree", "family_status": "Married with adult children"},
             attraction_preferences={"preferred_attraction_types": ["Ice/Snow Sports"]})),
    "overall_coherence": (
        make(transportation_preferences={"intercity_transport": "Airplane", "seat_class": "Economy Class"}),
        make(transportation_preferences={"intercity_transport": "Airplane", "seat_class": "Second Class Seat"})),
    "age_occupation": (make({"age": 62, "occupation": "Retiree", "family_status": "Married with adult children"}),
                       make({"age": 40, "occupation": "Retiree"})),
}  # fmt: skip


def test_every_rule_has_cases():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_passes_and_fails(rule):
    good, bad = CASES[rule]
    assert rule not in {i.rule for i in check_profile(good)}, check_profile(good)
    issues = {i.rule: i.reason for i in check_profile(bad)}
    assert rule in issues and issues[rule]


def test_more_coherence_failures():
    mixed = make(
        hotel_preferences={"star_requirement": ["2-Star & Below/Economy", "5-Star/Luxury"]}
    )
    assert "overall_coherence" in {i.rule for i in check_profile(mixed)}
    clash = make(
        {"occupation": "Senior Executive", "age": 45, "family_status": "Married with adult children"},
        hotel_preferences={"star_requirement": ["2-Star & Below/Economy"]},
        dining_requirements={"cuisine_preferences": ["Seafood"], "price_level": "Luxury (300-500 CNY/person)"},
    )  # fmt: skip
    assert "overall_coherence" in {i.rule for i in check_profile(clash)}
    assert check_profile(make()) == []


# --- sampling ----------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_sampled_profiles_are_consistent_and_sized(difficulty):
    counts = []
    for i in range(300):
        profile = sample_profile(rng_for(1, difficulty, i), f"{difficulty}-{i}", difficulty)
        assert check_profile(profile) == []
        counts.append(len(profile.categories))
    mean = sum(counts) / len(counts)
    expected = {"easy": (1, 1, 1.0), "medium": (2, 3, 2.4), "hard": (4, 4, 4.0)}[difficulty]
    assert expected[0] <= min(counts) and max(counts) <= expected[1]
    assert abs(mean - expected[2]) <= 0.15 * expected[2]


def test_sampling_is_deterministic_and_counts_rejections():
    stats: dict[str, int] = {}
    a = [sample_profile(rng_for(5, "x", i), "p", "hard", stats) for i in range(50)]
    b = [sample_profile(rng_for(5, "x", i), "p", "hard") for i in range(50)]
    assert a == b
    assert stats["drawn"] > 50 and sum(v for k, v in stats.items() if k in RULES) > 0


def test_draws():
    d = rng_for(3, "draws")
    assert all(2 <= d.randint(2, 5) <= 5 for _ in range(500))
    assert {d.randint(2, 5) for _ in range(500)} == {2, 3, 4, 5}
    sample = d.sample(range(10), 4)
    assert len(set(sample)) == 4
    assert rng_for(3, "draws").random() == rng_for(3, "draws").random()
    assert rng_for(3, "draws").random() != rng_for(4, "draws").random()


# --- the LLM judge -----------------------------------------------------------------------------


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def client(server):
    return OpenAIChatClient("fake-model", base_url=server.base_url, max_retries=0)


def test_judge_prompt_and_parsing():
    fields = judge_fields(make())
    assert fields["location"] == "Hangzhou" and "4-Star/Upscale" in fields["hotel_preference"]
    assert parse_verdict('{"reasonable": true, "reason": "fine"}').reasonable
    assert not parse_verdict('```json\n{"reasonable": "false", "reason": "x"}\n```').reasonable
    assert parse_verdict(
        '"reasonable": true, "reason": "brace-less as printed in Figure 8"'
    ).reasonable
    for bad in ("", "I think it is fine.", '{"reason": "no verdict"}', '{"reasonable": "maybe"}'):
        with pytest.raises(ValueError):
            parse_verdict(bad)
    assert extract_json('Sure! [{"a": 1},]') == [{"a": 1}]


@pytest.mark.anyio
async def test_llm_judge_against_local_server(server):
    server.push(Reply('{"reasonable": false, "reason": "a surgeon with primary education"}'))
    async with client(server) as c:
        judge = LLMProfileJudge(c)
        verdict = await judge.judge(make())
    assert not verdict.reasonable and "surgeon" in verdict.reason
    prompt = server.requests[0]["messages"][0]["content"]
    assert "Age: 34" in prompt and "Location: Hangzhou" in prompt and '"reasonable"' in prompt
    assert judge.usage.total_tokens > 0


@pytest.mark.anyio
async def test_llm_judge_rejects_malformed_json_then_retries(server):
    server.push(
        Reply("The persona looks {reasonable: yes"), Reply('{"reasonable": true, "reason": "ok"}')
    )
    async with client(server) as c:
        assert (await LLMProfileJudge(c).judge(make())).reasonable
        assert len(server.requests) == 2
        server.push(*[Reply("not json")] * 2)
        with pytest.raises(JudgeError):
            await LLMProfileJudge(c, max_attempts=2).judge(make())


@pytest.mark.anyio
async def test_filter_profile_rules_first_then_judge(server):
    _, bad = CASES["age_education"]
    async with client(server) as c:
        rules = [i.rule for i in await filter_profile(bad, LLMProfileJudge(c))]
        assert "age_education" in rules and "llm_judge" not in rules
        assert server.requests == []  # the rules rejected it: no model call
        server.push(Reply('{"reasonable": false, "reason": "implausible hobby mix"}'))
        issues = await filter_profile(make(), LLMProfileJudge(c))
    assert [(i.rule, i.reason) for i in issues] == [("llm_judge", "implausible hobby mix")]
    assert await filter_profile(make()) == []
