import pytest

from travelgym.suites.compass.packages import (
    FlightPackage,
    HotelPackage,
    PackageIdError,
    PermitPackage,
    day_to_date,
    parse_package_id,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("pkg_12_3_5_2", HotelPackage(12, 3, 5, 2)),
        ("pkg_1_31_32_1", HotelPackage(1, 31, 32, 1)),
        ("flight_7_1_31", FlightPackage(7, 1, 31)),
        ("permit_3_10_2", PermitPackage(3, 10, 2)),
    ],
)
def test_round_trip(text, expected):
    parsed = parse_package_id(text)
    assert parsed == expected
    assert parsed.id == text


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "pkg_1_5_3_1",
        "pkg_1_0_3_1",
        "pkg_1_3_33_1",
        "pkg_1_3_5_0",
        "flight_1_5_5",
        "flight_1_5",
        "permit_1_32_1",
        "permit_1_5_0",
        "hotel_1_2_3",
        "pkg_a_1_2_1",
        None,
        12,
    ],
)
def test_rejects_malformed(bad):
    with pytest.raises(PackageIdError):
        parse_package_id(bad)


def test_kind_mismatch_and_dates():
    with pytest.raises(PackageIdError, match="not a flight"):
        parse_package_id("pkg_1_3_5_1", kind="flight")
    assert day_to_date(32).isoformat() == "2025-09-01"
    assert HotelPackage(1, 3, 7, 1).nights == 4
