"""The plan text helpers read as the published script does."""

from travelgym.suites.travelplanner.evaluation.parsing import (
    attraction_list,
    day_cities,
    drive_mode,
    flight_number,
    from_to,
    is_flight,
    name_city,
    strip_parenthesis,
    transport_kind,
)


def test_name_city_splits_on_the_last_comma():
    assert name_city("Bright, Modern, Clean Home, Atlanta") == ("Bright, Modern, Clean Home",
                                                                "Atlanta")  # fmt: skip
    assert name_city("Nagai,Myrtle Beach") == ("Nagai", "Myrtle Beach")
    assert name_city("Loft, Denver(Colorado)") == ("Loft", "Denver")
    assert name_city("no comma here") is None
    assert name_city("trailing comma,") is None


def test_from_to_takes_the_destination_up_to_the_next_comma():
    text = "Flight Number: F1, from St. Louis to New York, Departure Time: 08:00"
    assert from_to(text) == ("St. Louis", "New York")
    assert from_to("from Denver(Colorado) to Aspen(Colorado)") == ("Denver(Colorado)",
                                                                   "Aspen(Colorado)")  # fmt: skip
    assert from_to("From Denver to Aspen") == (None, None)  # case-sensitive, as the script
    assert from_to("Taxi; Cost: 50") == (None, None)


def test_strip_parenthesis_keeps_the_space_before_it():
    assert strip_parenthesis("Denver(Colorado)") == "Denver"
    assert strip_parenthesis("Denver (Colorado)") == "Denver "
    assert strip_parenthesis("Denver (open") == "Denver (open"


def test_attraction_list_drops_the_piece_after_the_last_semicolon():
    assert attraction_list("A, X;B, X;") == ["A, X", "B, X"]
    assert attraction_list("A, X;B, X") == ["A, X"]
    assert attraction_list("A, X") == []


def test_modes():
    assert is_flight("flight number: f1") and not is_flight("Flight F1")
    assert flight_number("Flight Number: F3792603, from A to B") == "F3792603"
    assert flight_number("flight number: F1, from A to B") is None
    assert drive_mode("Self-driving, taxi") == "self-driving" and drive_mode("Taxi") == "taxi"
    assert transport_kind("Self-driving, taxi") == "Taxi"
    assert transport_kind("Flight Number: F1") == "Flight" and transport_kind("Bus") is None


def test_day_cities_is_a_string_on_a_day_without_a_leg():
    assert day_cities("from Boston to Myrtle Beach(South Carolina)") == ["Boston", "Myrtle Beach"]
    assert day_cities("Myrtle Beach") == "Myrtle Beach"
    assert day_cities("from Boston") is None
