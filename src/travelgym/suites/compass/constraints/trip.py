"""Flight constraints (Level II+) and the permit constraint (Level III)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from travelgym.suites.compass.constraints.base import (
    PARK_NAMES,
    ComponentConstraint,
    ConstraintBase,
    missing,
)
from travelgym.suites.compass.packages import day_to_date

TimeText = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")


class _FlightConstraint(ComponentConstraint):
    component: ClassVar[str] = "flight"


class TripCoherence(_FlightConstraint):
    """Flights land at an airport serving the hotel's park on check-in day and fly back on
    check-out day. In the solver this is the join of hotel and flight on (park, dates)."""

    kind: Literal["trip_coherence"] = "trip_coherence"
    component: ClassVar[str] = "plan"

    def check(self, plan):
        if plan.flight is None or plan.hotel is None:
            return missing(plan, "flight" if plan.flight is None else "hotel")
        f, h = plan.flight, plan.hotel
        if (f["start"], f["end"]) != (h["start"], h["end"]):
            return (
                f"the flights ({day_to_date(f['start'])} / {day_to_date(f['end'])}) do not match "
                f"the hotel stay ({day_to_date(h['start'])} to {day_to_date(h['end'])})"
            )
        if f["drive_hours"] is None:
            return f"the flight lands at {f['destination']}, which does not serve {PARK_NAMES[h['park_id']]}"
        return None

    def sentence(self):
        return (
            "Flights must arrive on our check-in day and return on our check-out day, at an "
            "airport that serves the park."
        )


class OriginCity(_FlightConstraint):
    kind: Literal["origin_city"] = "origin_city"
    city: str
    airport: str = Field(pattern=r"^[A-Z]{3}$")

    def flight_where(self, spec):
        return "o.origin = ?", (self.airport,)

    def check_facts(self, flight):
        if flight["origin"] != self.airport:
            return f"the flight leaves from {flight['origin']}, not {self.city} ({self.airport})"
        return None

    def sentence(self):
        return f"We fly from {self.city} ({self.airport}) and back."


class DirectFlights(_FlightConstraint):
    kind: Literal["direct_flights"] = "direct_flights"

    def flight_where(self, spec):
        return "o.stops = 0 AND r.stops = 0", ()

    def check_facts(self, flight):
        return None if flight["direct"] else "a flight leg has a stop"

    def sentence(self):
        return "Only non-stop flights, both ways."


class Airline(_FlightConstraint):
    kind: Literal["airline"] = "airline"
    code: str = Field(pattern=r"^[A-Z0-9]{2}$")
    name: str

    def flight_where(self, spec):
        return "o.airline = ?", (self.code,)

    def check_facts(self, flight):
        return (
            None
            if flight["airline"] == self.code
            else f"the airline is {flight['airline']}, not {self.name}"
        )

    def sentence(self):
        return f"We only fly {self.name}."


class BookingClass(_FlightConstraint):
    kind: Literal["booking_class"] = "booking_class"
    booking_class: Literal["economy", "premium_economy", "business"]

    def flight_where(self, spec):
        return "t.booking_class = ?", (self.booking_class,)

    def check_facts(self, flight):
        if flight["booking_class"] != self.booking_class:
            return f"the fare is {flight['booking_class']}, not {self.booking_class}"
        return None

    def sentence(self):
        return f"We fly {self.booking_class.replace('_', ' ')} class."


class FlightTimeWindow(_FlightConstraint):
    """A leg's departure or arrival (local time) within [earliest, latest]; next-day arrivals
    count as later than any same-day time."""

    kind: Literal["flight_time_window"] = "flight_time_window"
    leg: Literal["outbound", "return"]
    event: Literal["departure", "arrival"]
    earliest: str = TimeText
    latest: str = TimeText
    _COLUMNS: ClassVar[dict] = {
        ("outbound", "departure"): ("o.departure_time", "out_departure"),
        ("outbound", "arrival"): ("o.arrival_time", "out_arrival"),
        ("return", "departure"): ("r.departure_time", "ret_departure"),
        ("return", "arrival"): ("r.arrival_time", "ret_arrival"),
    }

    def flight_where(self, spec):
        column, _ = self._COLUMNS[(self.leg, self.event)]
        same_day = f" AND {column[0]}.arrival_day_offset = 0" if self.event == "arrival" else ""
        return f"{column} BETWEEN ? AND ?{same_day}", (self.earliest, self.latest)

    def check_facts(self, flight):
        value = flight[self._COLUMNS[(self.leg, self.event)][1]]
        if not self.earliest <= value <= self.latest:
            return f"the {self.leg} flight's {self.event} {value} is outside {self.earliest}-{self.latest}"
        return None

    def sentence(self):
        verb = "depart" if self.event == "departure" else "arrive"
        flight = "outbound flight" if self.leg == "outbound" else "return flight"
        return f"The {flight} must {verb} between {self.earliest} and {self.latest}."


class MaxFlightDuration(_FlightConstraint):
    kind: Literal["max_flight_duration"] = "max_flight_duration"
    minutes: int = Field(gt=0)

    def flight_where(self, spec):
        return "o.duration_min <= ? AND r.duration_min <= ?", (self.minutes, self.minutes)

    def check_facts(self, flight):
        if flight["max_leg_duration"] > self.minutes:
            return f"a leg takes {flight['max_leg_duration']} minutes, over {self.minutes}"
        return None

    def sentence(self):
        return f"No flight leg may take longer than {self.minutes // 60}h {self.minutes % 60:02d}m."


class MaxAirportDrive(_FlightConstraint):
    kind: Literal["max_airport_drive"] = "max_airport_drive"
    hours: float = Field(gt=0)

    def flight_where(self, spec):
        return "pa.drive_hours <= ?", (self.hours,)

    def check_facts(self, flight):
        if flight["drive_hours"] is None or flight["drive_hours"] > self.hours:
            return (
                f"the drive from {flight['destination']} to the park is over {self.hours:g} hours"
            )
        return None

    def sentence(self):
        return f"The arrival airport must be at most {self.hours:g} hours' drive from the park."


class PermitRequired(ConstraintBase):
    """One of the named permits, for ``days`` days, starting and ending within the stay."""

    kind: Literal["permit_required"] = "permit_required"
    permit_ids: list[int] = Field(min_length=1)
    names: list[str] = Field(min_length=1)
    days: int = Field(ge=1)
    component: ClassVar[str] = "permit"

    def permit_where(self, spec):
        marks = ",".join("?" * len(self.permit_ids))
        return (
            f"p.permit_id IN ({marks}) AND ? BETWEEN p.min_duration_days AND p.max_duration_days",
            (*self.permit_ids, self.days),
        )

    def fits_stay(self, permit_day: int, start: int, end: int) -> bool:
        """The permit's days lie within the stay (from check-in to check-out day)."""
        return start <= permit_day and permit_day + self.days - 1 <= end

    def check(self, plan):
        if plan.permit is None or plan.hotel is None:
            return missing(plan, "permit" if plan.permit is None else "hotel")
        p, h = plan.permit, plan.hotel
        if p["permit_id"] not in self.permit_ids:
            return f"the permit is not {' or '.join(self.names)}"
        if p["days"] != self.days:
            return f"the permit is for {p['days']} day(s), we need {self.days}"
        if not self.fits_stay(p["start"], h["start"], h["end"]):
            return f"the permit on {day_to_date(p['start'])} is not within our stay"
        return None

    def sentence(self):
        names = " or ".join(self.names)
        span = f"for {self.days} days " if self.days > 1 else ""
        return f"We must get a {names} permit {span}during our stay."
