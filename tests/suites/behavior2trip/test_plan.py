"""The plan schema and the tolerant parser: tags, fences, wrappers, key variants, malformed
answers and the value coercions."""

from __future__ import annotations

import json

import pytest

from travelgym.suites.behavior2trip.plan import Plan, clock_minutes, plan_json_schema
from travelgym.suites.behavior2trip.plan_parse import parse_plan
from travelgym.suites.behavior2trip.plan_values import (
    intercity_mode,
    local_mode,
    parse_minutes,
    parse_price,
)

DAY = {
    "day": 1,
    "date": "2025-10-20",
    "city": "Shanghai",
    "weather": "Sunny, 15-22 C",
    "city_info": "China's largest city.",
    "intercity_transport": [{"mode": "flight", "number": "CA1011", "from_city": "Beijing",
                             "to_city": "Shanghai", "departure_time": "14:05",
                             "arrival_time": "16:05", "price": 880, "seat_class": "Economy Class"}],
    "breakfast": {"id": "R00001", "name": "A", "start_time": "08:00", "end_time": "08:30", "price": 30},
    "lunch": {"id": "R00002", "name": "B", "start_time": "12:00", "end_time": "13:00", "price": 90},
    "dinner": {"id": "R00003", "name": "C", "start_time": "18:00", "end_time": "19:00", "price": 120},
    "attractions": [{"id": "A00061", "name": "The Bund", "start_time": "17:00",
                     "end_time": "17:30", "price": 0, "description": "The waterfront."}],
    "local_transport": [{"from": "A00061", "to": "R00003", "mode": "Walking", "minutes": 12}],
    "accommodation": {"id": "H00081", "name": "Motel", "check_in_time": "19:30", "price": 217},
}  # fmt: skip


def _text(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def test_canonical_answer_round_trips():
    plan, problems = parse_plan(f"<answer>{_text([DAY])}</answer>")
    assert problems == [] and plan is not None and plan.issues == []
    assert plan.to_json() == [DAY]
    again = Plan.model_validate({"days": plan.to_json()})
    assert again.to_json() == [DAY]
    day = plan.days[0]
    assert day.local_transport[0].from_ == "A00061"
    assert day.intercity_transport[0].price == 880.0 and day.accommodation.check_in_time == "19:30"


@pytest.mark.parametrize(
    "text, note",
    [
        (f"Here it is.\n<answer>\n{_text([DAY])}\n</answer>\nEnjoy!", None),
        (f"<think>draft [1, 2]</think><answer>```json\n{_text([DAY])}\n```</answer>", None),
        (f"<result>{_text([DAY])}</result>", "<result>"),
        (f"<ANSWER>{_text([DAY])}", "not closed"),
        (f"```json\n{_text([DAY])}\n```", "no <answer> tag"),
        (f"The plan: {_text([DAY])} -- have fun", "no <answer> tag"),
        (_text([DAY]), "no <answer> tag"),
        (f"<answer>{_text({'days': [DAY]})}</answer>", None),
        (f"<answer>{_text({'travel_plan': {'itinerary': [DAY]}})}</answer>", None),
        (f"<answer>{_text(DAY)}</answer>", None),
        (f"<answer>{_text({'Day 1': DAY})}</answer>", None),
        ("<answer>" + _text([DAY])[:-1] + ",]</answer>", None),  # trailing comma
        ("<answer>" + repr([DAY]) + "</answer>", None),  # Python literal (single quotes)
    ],
)
def test_extraction_variants(text, note):
    plan, problems = parse_plan(text)
    assert plan is not None, problems
    assert plan.to_json() == [DAY]
    if note is None:
        assert problems == []
    else:
        assert any(note in p for p in problems)


@pytest.mark.parametrize(
    "text, why",
    [
        (None, "empty answer"),
        ("   ", "empty answer"),
        ("I could not finish the plan.", "invalid JSON"),
        ('<answer>[{"day": 1, "city": "Shanghai",</answer>', "invalid JSON"),
        ("<answer>[1, 2, 3]</answer>", "no day object"),
        ('<answer>{"status": "ok"}</answer>', "no days"),
        ("<answer>[]</answer>", "no days"),
    ],
)
def test_undeliverable_answers(text, why):
    plan, problems = parse_plan(text)
    assert plan is None
    assert any(why in p for p in problems), problems


def test_key_variants_and_coercions():
    raw = [{
        "Day": "Day 1", "Date": "2025-10-20 (Monday)", "Destination": "Shanghai",
        "Weather Info": {"condition": "Sunny", "high": 22},
        "City Background": "A port city.",
        "Transportation": {"outbound": {"type": "High-speed Rail", "Train Number": "G13",
                                        "origin": "Beijing", "destination": "Shanghai",
                                        "depart": "08:15", "arrive": "13:18",
                                        "fare": "¥618.6", "seat": "2nd class"}},
        "Meals": {"Breakfast": "Hotel buffet", "Lunch": {"restaurant": "Xiao Nan Guo",
                  "time": "13:45 - 14:45", "cost": "113 CNY per person"},
                  "Dinner": {"poi_id": "R00172", "time_slot": "6:30 PM-7:30 PM", "price": "free"}},
        "Sightseeing": [{"attraction_name": "The Bund", "time": "15:30", "ticket": 0,
                         "details": "Walk along the river.", "getting_there": "Metro, about 20 minutes"}],
        "Hotel": [{"hotel_name": "Motel 168", "check-in": "20:00", "price_per_night": "217"}],
        "Tips": "Carry an umbrella.",
        "rating": 5,
    }]  # fmt: skip
    plan, problems = parse_plan("<answer>" + _text(raw) + "</answer>")
    assert plan is not None and plan.issues == [] and problems == []
    day = plan.days[0]
    assert (day.day, day.date, day.city, day.tips) == (
        1,
        "2025-10-20",
        "Shanghai",
        "Carry an umbrella.",
    )
    assert "Sunny" in day.weather and day.city_info == "A port city."
    leg = day.intercity_transport[0]
    assert (leg.mode, leg.number, leg.from_city, leg.to_city) == (
        "train",
        "G13",
        "Beijing",
        "Shanghai",
    )
    assert (leg.departure_time, leg.arrival_time, leg.price, leg.seat_class) == (
        "08:15",
        "13:18",
        618.6,
        "2nd class",
    )
    assert day.breakfast.name == "Hotel buffet"
    assert (day.lunch.name, day.lunch.start_time, day.lunch.end_time, day.lunch.price) == (
        "Xiao Nan Guo",
        "13:45",
        "14:45",
        113.0,
    )
    assert (day.dinner.id, day.dinner.start_time, day.dinner.end_time, day.dinner.price) == (
        "R00172",
        "18:30",
        "19:30",
        0.0,
    )
    sight = day.attractions[0]
    assert (sight.name, sight.start_time, sight.price, sight.description) == (
        "The Bund",
        "15:30",
        0.0,
        "Walk along the river.",
    )
    assert (day.accommodation.name, day.accommodation.check_in_time, day.accommodation.price) == (
        "Motel 168",
        "20:00",
        217.0,
    )
    local = day.local_transport[0]
    assert (local.to, local.mode, local.minutes, local.from_) == ("The Bund", "Subway", 20.0, None)
    assert day.model_extra == {"rating": 5}  # unknown keys are kept


def test_mixed_activity_lists_are_sorted_into_sections():
    raw = {"days": [{"day": 1, "city": "Shanghai", "activities": [
        {"type": "breakfast", "name": "A", "start_time": "08:00"},
        {"id": "A00061", "name": "The Bund", "start_time": "09:30"},
        {"type": "meal", "name": "B", "start_time": "12:00"},
        {"type": "Show", "name": "Acrobatics", "start_time": "15:00"},
        {"type": "restaurant", "name": "C", "start_time": "18:30"},
        {"type": "transfer", "mode": "taxi", "duration": "15 min", "from": "C", "to": "Motel"},
        {"type": "train", "number": "G13", "from": "Beijing", "to": "Shanghai"},
        {"id": "H00081", "name": "Motel", "check_in": "20:00"},
    ]}]}  # fmt: skip
    plan, _ = parse_plan(_text(raw))
    day = plan.days[0]
    assert [day.breakfast.name, day.lunch.name, day.dinner.name] == ["A", "B", "C"]
    assert [a.name for a in day.attractions] == ["The Bund"]
    assert [e.name for e in day.entertainment] == ["Acrobatics"]
    assert day.local_transport[0].mode == "Taxi" and day.local_transport[0].minutes == 15
    assert day.intercity_transport[0].mode == "train"
    assert day.accommodation.id == "H00081" and day.accommodation.check_in_time == "20:00"


def test_uncoercible_values_are_format_issues():
    raw = [{"day": 1, "city": "Shanghai", "date": "next Monday",
            "lunch": {"name": "B", "start_time": "noonish", "price": "cheap"},
            "attractions": [42],
            "local_transport": [{"mode": "Taxi", "minutes": "a while"}]},
           "not a day"]  # fmt: skip
    plan, problems = parse_plan(_text(raw))
    assert plan is not None and len(plan.days) == 1
    text = " | ".join(plan.issues)
    for expected in ("date 'next Monday'", "lunch start_time 'noonish'", "lunch price 'cheap'",
                     "attractions is not an object", "minutes 'a while'", "day 2: not an object"):  # fmt: skip
        assert expected in text
    assert problems[0].startswith("no <answer> tag") and problems[1:] == plan.issues
    assert plan.days[0].lunch.name == "B" and plan.days[0].lunch.price is None


def test_missing_fields_still_deliver():
    plan, problems = parse_plan('<answer>[{"day": 1}, {"day": 2, "city": "Shanghai"}]</answer>')
    assert plan is not None and problems == []
    assert (
        plan.days[0].city is None and plan.days[0].lunch is None and plan.days[1].attractions == []
    )


def test_value_helpers():
    assert clock_minutes("09:05") == 545 and clock_minutes("9:05") == 545
    assert clock_minutes("24:00") == 1440 and clock_minutes("7:30 pm") == 1170
    assert clock_minutes("12:00 AM") == 0 and clock_minutes("21:00:00") == 1260
    for bad in ("25:00", "24:30", "9", "noon", None, 930, "13:00 pm"):
        assert clock_minutes(bad) is None
    assert parse_minutes("1h 20m") == 80 and parse_minutes("~30 minutes") == 30
    assert (
        parse_minutes("1.5 hours") == 90
        and parse_minutes(12) == 12
        and parse_minutes("soon") is None
    )
    assert (
        parse_price("¥1,275") == 1275
        and parse_price("free entry") == 0
        and parse_price("n/a") is None
    )
    assert parse_price(True) is None and parse_price(99.5) == 99.5
    assert [local_mode(x) for x in ("metro line 2", "Taxi", "on foot", "Didi", "car", "public transport")] == [
        "Subway", "Taxi", "Walking", "Ride-sharing", "Driving", "Transit"]  # fmt: skip
    assert local_mode("hoverboard") == "hoverboard" and local_mode("") is None
    assert intercity_mode("High-speed Rail") == "train" and intercity_mode("Airplane") == "flight"
    assert intercity_mode("Long-distance Bus") == "bus" and intercity_mode(None, "G13") == "train"
    assert intercity_mode(None, "CA1011") == "flight" and intercity_mode(None, "B0001") == "bus"
    assert intercity_mode("", "???") is None


def test_json_schema():
    schema = plan_json_schema()
    assert schema["type"] == "array"
    props = schema["items"]["properties"]
    for key in ("date", "city", "weather", "city_info", "intercity_transport", "breakfast", "lunch",
                "dinner", "attractions", "entertainment", "local_transport", "accommodation"):  # fmt: skip
        assert key in props
    assert "from" in schema["items"]["$defs"]["LocalLeg"]["properties"]


def test_scanning_prefers_day_lists():
    text = f'<think>Options: [1, 2, 3] and {{"a": 1}}</think>Scratch ["x"]. Final: {_text([DAY])}'
    plan, problems = parse_plan(text)
    assert plan is not None and plan.to_json() == [DAY]
    assert problems == ["no <answer> tag: the plan was looked for in the whole text"]


def test_day_itinerary_is_not_a_wrapper():
    day = {"day": 1, "city": "Shanghai",
           "itinerary": [{"type": "lunch", "name": "B", "time": "12:00-13:00"},
                         {"type": "attraction", "name": "The Bund", "time": "14:00-15:00"}]}  # fmt: skip
    for value in (day, [day], {"plan": [day]}):
        plan, _ = parse_plan(_text(value))
        assert len(plan.days) == 1 and plan.days[0].lunch.name == "B"
        assert plan.days[0].attractions[0].name == "The Bund"


def test_local_legs_listed_as_transport():
    day = {"day": 1, "city": "Shanghai", "transport": [
        {"type": "flight", "number": "CA1011", "from": "Beijing", "to": "Shanghai"},
        {"mode": "Taxi", "from": "Hongqiao Airport", "to": "Motel", "duration": "35 min"},
        {"mode": "bus", "from": "Motel", "to": "The Bund", "minutes": 25},
        {"mode": "Long-distance Bus", "number": "B0001", "from": "Shanghai", "to": "Suzhou"},
    ]}  # fmt: skip
    plan, _ = parse_plan(_text([day]))
    d = plan.days[0]
    assert [(g.mode, g.number) for g in d.intercity_transport] == [
        ("flight", "CA1011"),
        ("bus", "B0001"),
    ]
    assert [(x.mode, x.minutes, x.from_) for x in d.local_transport] == [
        ("Taxi", 35.0, "Hongqiao Airport"), ("Bus", 25.0, "Motel")]  # fmt: skip
