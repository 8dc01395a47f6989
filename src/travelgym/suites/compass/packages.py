"""Booking package IDs: the decision variable x = (hotel, flight, permit) as strings.

Formats (public contract, see ``docs/compass/package_ids.md``); days are days of August 2025:

- hotel  ``pkg_<configid>_<startday>_<endday>_<rooms>``: room configuration (room + rate plan),
  check-in day 1-31, check-out day 2-32 (32 = 1 September), number of rooms 1-9.
- flight ``flight_<templateid>_<depday>_<retday>``: round-trip template, outbound day 1-31,
  return day after the outbound day.
- permit ``permit_<permitid>_<day>_<days>``: permit template, start day 1-31, duration in days
  (1 for day hikes and tours).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from travelgym.suites.compass.calibration import MONTH, YEAR

FIRST_DAY, LAST_NIGHT = 1, 31
MAX_ROOMS = 9


class PackageIdError(ValueError):
    """A package ID that does not follow its format."""


@lru_cache(maxsize=256)  # a few dozen days, converted millions of times in a run
def day_to_date(day: int) -> dt.date:
    """Day of August 2025 (32 = 1 September) as a date."""
    return dt.date(YEAR, MONTH, 1) + dt.timedelta(days=day - 1)


def date_to_day(date: dt.date) -> int:
    """Inverse of :func:`day_to_date`."""
    return (date - dt.date(YEAR, MONTH, 1)).days + 1


@dataclass(frozen=True)
class HotelPackage:
    config_id: int
    start_day: int
    end_day: int
    rooms: int

    @property
    def id(self) -> str:
        return f"pkg_{self.config_id}_{self.start_day}_{self.end_day}_{self.rooms}"

    @property
    def nights(self) -> int:
        return self.end_day - self.start_day


@dataclass(frozen=True)
class FlightPackage:
    template_id: int
    dep_day: int
    ret_day: int

    @property
    def id(self) -> str:
        return f"flight_{self.template_id}_{self.dep_day}_{self.ret_day}"


@dataclass(frozen=True)
class PermitPackage:
    permit_id: int
    day: int
    days: int

    @property
    def id(self) -> str:
        return f"permit_{self.permit_id}_{self.day}_{self.days}"


Package = HotelPackage | FlightPackage | PermitPackage

# ASCII digits only: ``\d`` and ``int()`` also take Arabic-Indic, fullwidth, Devanagari... digits,
# which would make a look-alike of an id name the same package
_PATTERNS = {
    "pkg": re.compile(r"pkg_([0-9]{1,9})_([0-9]{1,2})_([0-9]{1,2})_([0-9]{1,2})", re.ASCII),
    "flight": re.compile(r"flight_([0-9]{1,9})_([0-9]{1,2})_([0-9]{1,2})", re.ASCII),
    "permit": re.compile(r"permit_([0-9]{1,9})_([0-9]{1,2})_([0-9]{1,2})", re.ASCII),
}
_ASCII_SPACE = " \t\r\n"  # around an id, as the tools always allowed; other spaces are not
_EXAMPLES = {"pkg": "pkg_123_5_8_1", "flight": "flight_42_5_8", "permit": "permit_7_6_1"}


def parse_package_id(package_id: object, kind: str | None = None) -> Package:
    """Parse a package ID, checking its format and day ranges; ``kind`` is pkg/flight/permit.

    Only the id exactly as the tools write it is accepted (ASCII digits, no leading zeros,
    nothing but ASCII spaces around it): any other spelling of the same numbers is refused
    like an unknown id, so a look-alike can never name, and score as, a real package."""
    if not isinstance(package_id, str):
        raise PackageIdError(f"package id must be a string, got {type(package_id).__name__}")
    text = package_id.strip(_ASCII_SPACE)
    prefix = text.split("_", 1)[0]
    if prefix not in _PATTERNS:
        raise PackageIdError(
            f"unknown package id {package_id!r}: expected one of "
            + ", ".join(f"{k}_... (e.g. {v})" for k, v in _EXAMPLES.items())
        )
    if kind is not None and prefix != kind:
        raise PackageIdError(f"{package_id!r} is not a {kind} package id (e.g. {_EXAMPLES[kind]})")
    match = _PATTERNS[prefix].fullmatch(text)
    if not match or any(len(g) > 1 and g.startswith("0") for g in match.groups()):
        raise PackageIdError(
            f"malformed {prefix} package id {package_id!r} (e.g. {_EXAMPLES[prefix]})"
        )
    nums = [int(g) for g in match.groups()]
    if prefix == "pkg":
        config, start, end, rooms = nums
        if not (FIRST_DAY <= start <= LAST_NIGHT and start < end <= LAST_NIGHT + 1):
            raise PackageIdError(
                f"{package_id!r}: check-in must be Aug 1-31 and check-out after it"
            )
        if not 1 <= rooms <= MAX_ROOMS:
            raise PackageIdError(f"{package_id!r}: rooms must be 1-{MAX_ROOMS}")
        return HotelPackage(config, start, end, rooms)
    if prefix == "flight":
        template, dep, ret = nums
        if not (FIRST_DAY <= dep < ret <= LAST_NIGHT):
            raise PackageIdError(
                f"{package_id!r}: outbound and return must be Aug 1-31, return later"
            )
        return FlightPackage(template, dep, ret)
    permit, day, days = nums
    if not (FIRST_DAY <= day <= LAST_NIGHT and days >= 1):
        raise PackageIdError(f"{package_id!r}: day must be Aug 1-31 and duration at least 1")
    return PermitPackage(permit, day, days)
