"""The tools of TravelPlanner's two-stage (tool-use) mode over a :class:`Sandbox`: FlightSearch,
GoogleDistanceMatrix, AccommodationSearch, RestaurantSearch, AttractionSearch, CitySearch and
NotebookWrite, as snake_case functions.

Searches reply with JSON rows in TravelPlanner's column names (``"Flight Number"``, ``"room
type"``, ...) and keep the result as ``DataFrame.to_string``-style text, which NotebookWrite
records, so a filled notebook reads like the dataset's reference information (and
:class:`~travelgym.suites.travelplanner.sandbox_reference.ReferenceSandbox` reads it back).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from travelgym.suites.travelplanner.database import (
    ACCOMMODATION_COLUMNS,
    ATTRACTION_COLUMNS,
    FLIGHT_COLUMNS,
    RESTAURANT_COLUMNS,
)
from travelgym.suites.travelplanner.frames import render_table
from travelgym.suites.travelplanner.sandbox import Accommodation, Attraction, Flight, Restaurant
from travelgym.suites.travelplanner.tools.context import PlannerContext
from travelgym.toolkit import ContentError

City = Annotated[str, Field(min_length=1, max_length=100, pattern=r"\S")]
Date = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")]
MAX_DESCRIPTION = 200


def flight_row(f: Flight) -> dict[str, Any]:
    """A flight in TravelPlanner's column names."""
    return dict(zip(FLIGHT_COLUMNS, (f.flight_number, f.price, f.dep_time, f.arr_time,
                                     f.actual_elapsed_time, f.flight_date, f.origin_city,
                                     f.dest_city, f.distance), strict=True))  # fmt: skip


def accommodation_row(a: Accommodation) -> dict[str, Any]:
    """An accommodation in TravelPlanner's column names."""
    return dict(zip(ACCOMMODATION_COLUMNS, (a.name, a.price, a.room_type, a.house_rules,
                                            a.minimum_nights, a.maximum_occupancy,
                                            a.review_rate_number, a.city), strict=True))  # fmt: skip


def restaurant_row(r: Restaurant) -> dict[str, Any]:
    """A restaurant in TravelPlanner's column names."""
    return dict(zip(RESTAURANT_COLUMNS, (r.name, r.average_cost, r.cuisines, r.aggregate_rating,
                                         r.city), strict=True))  # fmt: skip


def attraction_row(a: Attraction) -> dict[str, Any]:
    """An attraction in TravelPlanner's column names."""
    return dict(zip(ATTRACTION_COLUMNS, (a.name, a.latitude, a.longitude, a.address, a.phone,
                                         a.website, a.city), strict=True))  # fmt: skip


def _listing(ctx: PlannerContext, description: str, columns, rows: list[dict[str, Any]],
             empty: str, index: bool = True) -> dict[str, Any]:  # fmt: skip
    text = render_table(columns, rows, index=index) if rows else empty
    reply = {"description": description, "count": len(rows), "results": rows}
    if not rows:
        reply["message"] = empty
    return ctx.remember(description, text, reply)


def _city_listing(ctx: PlannerContext, city: str, find: Callable[[str], list], to_row,
                  columns, title: str, empty: str) -> dict[str, Any]:  # fmt: skip
    # a city search: the records ``find`` gives for the stripped city, as a listing
    city = city.strip()
    rows = [to_row(record) for record in find(city)]
    return _listing(ctx, f"{title} in {city}", columns, rows, empty)


def flight_search(ctx: PlannerContext, departure_city: City, destination_city: City,
                  date: Date) -> dict:  # fmt: skip
    """FlightSearch: the flights from one city to another on a date.

    Args:
        departure_city: The city to fly from, e.g. "St. Petersburg".
        destination_city: The city to fly to, e.g. "Rockford".
        date: The departure date, YYYY-MM-DD.

    Returns:
        description, count and results (each flight's Flight Number, Price, DepTime,
        ArrTime, ActualElapsedTime, FlightDate, OriginCityName, DestCityName, Distance); a
        message when there is no such flight.
    """
    try:
        dt.date.fromisoformat(date)
    except ValueError:
        raise ContentError(f"date {date!r} is not a calendar date (YYYY-MM-DD)") from None
    origin, dest = departure_city.strip(), destination_city.strip()
    rows = [flight_row(f) for f in ctx.sandbox.flights(origin, dest, date)]
    return _listing(ctx, f"Flight from {origin} to {dest} on {date}", FLIGHT_COLUMNS, rows,
                    f"There is no flight from {origin} to {dest} on {date}.", index=False)  # fmt: skip


def accommodation_search(ctx: PlannerContext, city: City) -> dict:
    """AccommodationSearch: the accommodations of a city (price per night).

    Args:
        city: The city, e.g. "Rockford".

    Returns:
        description, count and results (NAME, price, room type, house_rules, minimum
        nights, maximum occupancy, review rate number, city); a message when there are none.
    """
    return _city_listing(ctx, city, ctx.sandbox.accommodations, accommodation_row,
                         ACCOMMODATION_COLUMNS, "Accommodations",
                         "There is no accommodation in this city.")  # fmt: skip


def restaurant_search(ctx: PlannerContext, city: City) -> dict:
    """RestaurantSearch: the restaurants of a city (average cost per person).

    Args:
        city: The city, e.g. "Rockford".

    Returns:
        description, count and results (Name, Average Cost, Cuisines, Aggregate Rating,
        City); a message when there are none.
    """
    return _city_listing(ctx, city, ctx.sandbox.restaurants, restaurant_row, RESTAURANT_COLUMNS,
                         "Restaurants", "There is no restaurant in this city.")  # fmt: skip


def attraction_search(ctx: PlannerContext, city: City) -> dict:
    """AttractionSearch: the attractions of a city.

    Args:
        city: The city, e.g. "Rockford".

    Returns:
        description, count and results (Name, Latitude, Longitude, Address, Phone,
        Website, City); a message when there are none.
    """
    return _city_listing(ctx, city, ctx.sandbox.attractions, attraction_row, ATTRACTION_COLUMNS,
                         "Attractions", "There is no attraction in this city.")  # fmt: skip


def _km_text(km: float) -> str:
    return f"{km:,.0f} km" if float(km).is_integer() else f"{km:,} km"


def google_distance_matrix(ctx: PlannerContext, origin: City, destination: City,
                           mode: Literal["self-driving", "taxi"]) -> dict:  # fmt: skip
    """GoogleDistanceMatrix: the duration, distance and cost of driving between two cities.

    Args:
        origin: The city to start from.
        destination: The city to go to.
        mode: "self-driving" (cost per car, 5 people a car) or "taxi" (cost per taxi).

    Returns:
        origin, destination, mode, duration, distance (km), cost and the text
        TravelPlanner shows ("self-driving, from A to B, duration: ..., distance: ... km, cost:
        ..."); duration, distance and cost are null when there is no valid information.
    """
    origin, destination = origin.strip(), destination.strip()
    drive = ctx.sandbox.drive(origin, destination, mode)
    reply: dict[str, Any] = {"origin": origin, "destination": destination, "mode": mode,
                             "duration": None, "distance": None, "cost": None}  # fmt: skip
    if drive is None or drive.duration is None or drive.distance_km is None:
        text = f"{mode}, from {origin} to {destination}, no valid information."
    else:
        cost = int(drive.cost) if drive.cost is not None else None
        reply.update(duration=drive.duration, distance=drive.distance_km, cost=cost)
        text = (f"{mode}, from {origin} to {destination}, duration: {drive.duration}, "
                f"distance: {_km_text(drive.distance_km)}, cost: {cost}")  # fmt: skip
    reply["text"] = text
    label = "Self-driving" if mode == "self-driving" else "Taxi"
    return ctx.remember(f"{label} from {origin} to {destination}", text, reply)


def city_search(ctx: PlannerContext, state: City) -> dict:
    """CitySearch: the cities of a state that trips may visit.

    Args:
        state: The US state, e.g. "Texas".

    Returns:
        state and cities (names).
    """
    state = state.strip()
    cities = ctx.sandbox.cities_of_state(state)
    if not cities:
        raise ContentError(f"invalid state {state!r}: no city of the city set lies in it")
    return ctx.remember(f"Cities in {state}", repr(cities), {"state": state, "cities": cities})


def notebook_write(ctx: PlannerContext,
                   short_description: Annotated[str, Field(min_length=1,
                                                           max_length=MAX_DESCRIPTION)]) -> dict:  # fmt: skip
    """NotebookWrite: record the last search's result in the notebook the planner reads.

    Args:
        short_description: What the result is, e.g. "Flights from Austin to Dallas on
            2022-03-16".

    Returns:
        index (the entry's position, from 0) and a confirmation message.
    """
    if ctx.last_result is None:
        raise ContentError("nothing to write: run a search first; NotebookWrite records the "
                           "last search's result")  # fmt: skip
    search, text = ctx.last_result
    # "Search" keeps what was searched, so the notebook can be read back as a sandbox
    ctx.notebook.append({"Description": short_description.strip(), "Content": text,
                         "Search": search})  # fmt: skip
    index = len(ctx.notebook) - 1
    return {"index": index, "message": f"The information has been recorded in Notebook, and "
                                       f"its index is {index}."}  # fmt: skip
