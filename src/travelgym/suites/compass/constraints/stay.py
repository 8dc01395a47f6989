"""Fundamental constraints (park, dates, travellers, rooms, budget) and hotel constraints."""

from __future__ import annotations

import datetime as dt
from functools import cached_property
from typing import ClassVar, Literal

from pydantic import Field

from travelgym.suites.compass.constraints.base import (
    AMENITY_PHRASES,
    PARK_NAMES,
    ComponentConstraint,
    ConstraintBase,
    HotelAmenityName,
    RoomFeatureName,
    dollars,
    missing,
)
from travelgym.suites.compass.facts import cents
from travelgym.suites.compass.packages import date_to_day, day_to_date

# ----------------------------------------------------------------------------- fundamental


class Park(ComponentConstraint):
    kind: Literal["park"] = "park"
    park_ids: list[str] = Field(min_length=1)

    def hotel_where(self, spec):
        return f"h.park_id IN ({','.join('?' * len(self.park_ids))})", tuple(self.park_ids)

    def flight_where(self, spec):
        return f"pa.park_id IN ({','.join('?' * len(self.park_ids))})", tuple(self.park_ids)

    def check_facts(self, hotel):
        if hotel["park_id"] not in self.park_ids:
            return f"the hotel is at {PARK_NAMES.get(hotel['park_id'])}, not {self._names()}"
        return None

    def _names(self) -> str:
        return " or ".join(PARK_NAMES[p] for p in self.park_ids)

    def sentence(self):
        if len(self.park_ids) > 1:
            return f"Either {self._names()} would be fine for us: whichever gives the better trip."
        return f"We want to stay near {self._names()}."


class DateConstraint(ComponentConstraint):
    """Any constraint on the stay's dates; ``date_pairs`` lists the allowed (in, out) days."""

    def date_pairs(self) -> list[tuple[int, int]]:
        raise NotImplementedError

    @cached_property
    def _pair_set(self) -> frozenset[tuple[int, int]]:
        # a constraint is frozen: its pairs are computed once, not once per plan checked
        return frozenset(self.date_pairs())

    def check_facts(self, hotel):
        if (hotel["start"], hotel["end"]) not in self._pair_set:
            stay = f"{day_to_date(hotel['start'])} to {day_to_date(hotel['end'])}"
            return f"the stay {stay} does not fit: {self.sentence()}"
        return None


class StayDates(DateConstraint):
    kind: Literal["stay_dates"] = "stay_dates"
    check_in: dt.date
    check_out: dt.date

    def date_pairs(self):
        return [(date_to_day(self.check_in), date_to_day(self.check_out))]

    def sentence(self):
        return (
            f"We check in on {self.check_in:%A, %B} {self.check_in.day} and check out on "
            f"{self.check_out:%A, %B} {self.check_out.day}, {self.check_out.year}."
        )


class WeekendStay(DateConstraint):
    kind: Literal["weekend_stay"] = "weekend_stay"

    def date_pairs(self):
        fridays = [d for d in range(1, 30) if day_to_date(d).weekday() == 4]
        return [(d, d + 2) for d in fridays]

    def sentence(self):
        return "Any weekend in August works: check in on a Friday, check out on the Sunday."


class DateWindow(DateConstraint):
    kind: Literal["date_window"] = "date_window"
    earliest_check_in: dt.date
    latest_check_out: dt.date
    min_nights: int = Field(ge=1)
    max_nights: int = Field(ge=1)

    def date_pairs(self):
        first, last = date_to_day(self.earliest_check_in), date_to_day(self.latest_check_out)
        return [
            (s, s + n)
            for s in range(first, last)
            for n in range(self.min_nights, self.max_nights + 1)
            if s + n <= last
        ]

    def sentence(self):
        nights = (
            f"{self.min_nights} nights"
            if self.min_nights == self.max_nights
            else f"{self.min_nights} to {self.max_nights} nights"
        )
        return (
            f"We can travel any time between {self.earliest_check_in:%B} {self.earliest_check_in.day} (earliest "
            f"check-in) and {self.latest_check_out:%B} {self.latest_check_out.day} (latest check-out), for {nights}."
        )


class Travellers(ConstraintBase):
    kind: Literal["travellers"] = "travellers"
    count: int = Field(ge=1, le=12)

    def hotel_where(self, spec):
        return "r.max_occupancy * ? >= ?", (spec.rooms, self.count)

    def flight_where(self, spec):
        return "po.seats >= ? AND pr.seats >= ?", (self.count, self.count)

    def permit_where(self, spec):
        return "av.slots_remaining >= ? AND p.max_party_size >= ?", (self.count, self.count)

    def check(self, plan):
        if plan.hotel is None:
            return missing(plan, "hotel")
        if plan.hotel["rooms"] * plan.hotel["max_occupancy"] < self.count:
            return f"the rooms sleep {plan.hotel['rooms'] * plan.hotel['max_occupancy']}, we are {self.count}"
        if plan.flight and plan.flight["seats"] < self.count:
            return f"the flight has {plan.flight['seats']} seats left, we are {self.count}"
        if plan.permit and (
            plan.permit["slots"] < self.count or plan.permit["max_party_size"] < self.count
        ):
            return f"the permit cannot take a party of {self.count}"
        return None

    def sentence(self):
        return (
            f"There are {self.count} of us travelling."
            if self.count > 1
            else "I am travelling alone."
        )


class Rooms(ComponentConstraint):
    kind: Literal["rooms"] = "rooms"
    count: int = Field(ge=1, le=9)

    def check_facts(self, hotel):
        if hotel["rooms"] != self.count:
            return f"the booking has {hotel['rooms']} room(s), we want {self.count}"
        return None

    def sentence(self):
        return f"We want exactly {self.count} room{'s' if self.count > 1 else ''}."


class Budget(ConstraintBase):
    kind: Literal["budget"] = "budget"
    max_total: float = Field(gt=0)
    component: ClassVar[str] = "plan"

    def stay_having(self, spec):
        # a prune only (the hotel alone must fit); the solver checks the exact total in cents
        return "SUM(o.price) * ? <= ? + 0.005", (spec.rooms, self.max_total)

    def check(self, plan):
        total = plan.total_cost()
        if total > cents(self.max_total):
            return (
                f"the total {dollars(total)} is over the budget of {dollars(cents(self.max_total))}"
            )
        return None

    def sentence(self):
        return f"Our total budget is {dollars(cents(self.max_total))} for everything."


# ---------------------------------------------------------------------------------- hotel


class MaxNightlyPrice(ComponentConstraint):
    kind: Literal["max_nightly_price"] = "max_nightly_price"
    amount: float = Field(gt=0)

    def stay_having(self, spec):
        return "MAX(o.price) <= ?", (self.amount,)

    def check_facts(self, hotel):
        if hotel["max_night"] > cents(self.amount):
            return f"a night costs {dollars(hotel['max_night'])} per room, above {dollars(cents(self.amount))}"
        return None

    def sentence(self):
        return f"No night may cost more than {dollars(cents(self.amount))} per room."


class _Threshold(ComponentConstraint):
    column: ClassVar[str]
    op: ClassVar[str]
    label: ClassVar[str]
    value: float

    def hotel_where(self, spec):
        return f"h.{self.column} {self.op} ?", (self.value,)

    def check_facts(self, hotel):
        actual = hotel[self.column]
        ok = actual >= self.value if self.op == ">=" else actual <= self.value
        return (
            None if ok else f"the hotel's {self.label} is {actual}, we need {self.op} {self.value}"
        )


class MinStarRating(_Threshold):
    kind: Literal["min_star_rating"] = "min_star_rating"
    column, op, label = "star_rating", ">=", "star rating"

    def sentence(self):
        return f"The hotel must have at least {self.value:g} stars."


class MinReviewScore(_Threshold):
    kind: Literal["min_review_score"] = "min_review_score"
    column, op, label = "review_score", ">=", "review score"

    def sentence(self):
        return f"The hotel needs a guest review score of at least {self.value:g} out of 10."


class MaxDistance(_Threshold):
    kind: Literal["max_distance"] = "max_distance"
    column, op, label = "distance_km", "<=", "distance to the park (km)"

    def sentence(self):
        return f"The hotel must be within {self.value:g} km of the park."


class HotelAmenity(ComponentConstraint):
    kind: Literal["hotel_amenity"] = "hotel_amenity"
    amenity: HotelAmenityName

    def hotel_where(self, spec):
        return f"h.{self.amenity} = 1", ()

    def check_facts(self, hotel):
        return None if hotel[self.amenity] else f"the hotel does not meet: {self.sentence()}"

    def sentence(self):
        phrase = AMENITY_PHRASES[self.amenity]
        if phrase.startswith("to be "):
            return f"The hotel must be {phrase[len('to be ') :]}."
        return f"The hotel must have {phrase}."


class RoomFeature(ComponentConstraint):
    kind: Literal["room_feature"] = "room_feature"
    feature: RoomFeatureName

    def hotel_where(self, spec):
        return f"r.{self.feature} = 1", ()

    def check_facts(self, hotel):
        return None if hotel[self.feature] else f"the room lacks {AMENITY_PHRASES[self.feature]}"

    def sentence(self):
        return f"The room must have {AMENITY_PHRASES[self.feature]}."


class BedType(ComponentConstraint):
    kind: Literal["bed_type"] = "bed_type"
    bed_type: Literal["king", "queen", "double", "twin", "bunk"]

    def hotel_where(self, spec):
        return "r.bed_type = ?", (self.bed_type,)

    def check_facts(self, hotel):
        if hotel["bed_type"] != self.bed_type:
            return f"the room's bed is {hotel['bed_type']}, not {self.bed_type}"
        return None

    def sentence(self):
        return f"The room must have a {self.bed_type} bed."


class RatePolicy(ComponentConstraint):
    kind: Literal["rate_policy"] = "rate_policy"
    policy: Literal["free_cancellation", "no_prepayment", "breakfast_included"]
    _HAVING: ClassVar[dict[str, str]] = {
        # MAX over the policy texts is the strictest night (see tools/hotels.py)
        "free_cancellation": "MAX(o.cancellation_policy) = 'free_cancellation'",
        "no_prepayment": "MAX(o.prepayment) = 'no_prepayment'",
        "breakfast_included": "MAX(o.meal_plan) != 'room_only'",
    }
    _PHRASES: ClassVar[dict[str, str]] = {
        "free_cancellation": "free cancellation",
        "no_prepayment": "no prepayment",
        "breakfast_included": "breakfast included in the rate",
    }

    def stay_having(self, spec):
        return self._HAVING[self.policy], ()

    def check_facts(self, hotel):
        return (
            None if hotel[self.policy] else f"the rate does not have {self._PHRASES[self.policy]}"
        )

    def sentence(self):
        return f"The booking must come with {self._PHRASES[self.policy]}."
