"""Tool parameters are typed strictly, for every suite: a string for an integer, number or
boolean is a parameter error recorded as such (the paper's Table 4 counts it), while JSON's one
number type lets an integer stand for a number and an integral float for an integer."""

from __future__ import annotations

import json
import sqlite3

import pytest

from travelgym.agents.tool_session import ToolSession
from travelgym.suites.behavior2trip.tools import trips_registry
from travelgym.suites.compass.env import CompassToolSession
from travelgym.suites.compass.tools import compass_registry
from travelgym.toolkit import ToolRegistry, tool


@tool
def probe(count: int, ratio: float, flag: bool = False, label: str = "") -> dict:
    """Echo the typed arguments.

    Args:
        count: An integer.
        ratio: A number.
        flag: A boolean.
        label: A string.
    """
    return {"count": count, "ratio": ratio, "flag": flag, "label": label,
            "types": [type(count).__name__, type(ratio).__name__, type(flag).__name__]}  # fmt: skip


REGISTRY = ToolRegistry([probe])


@pytest.mark.parametrize(
    ("args", "where", "got"),
    [
        ({"count": "2", "ratio": 1.5}, "count", 'a string ("2")'),
        ({"count": 2, "ratio": "1.5"}, "ratio", 'a string ("1.5")'),
        ({"count": 2, "ratio": 1.5, "flag": "true"}, "flag", 'a string ("true")'),
        ({"count": 2, "ratio": 1.5, "flag": 1}, "flag", "a number"),
        ({"count": True, "ratio": 1.5}, "count", "a boolean (true)"),
        ({"count": 2.5, "ratio": 1.5}, "count", "a number (2.5)"),
        ({"count": 2, "ratio": 1.5, "label": 7}, "label", "a number"),
    ],
)
def test_a_value_of_another_json_type_is_a_parameter_error_naming_what_was_sent(args, where, got):
    result = REGISTRY.call("probe", json.dumps(args))
    assert not result.ok and result.error.category.value == "parameter"
    assert f"parameter '{where}'" in result.error.message
    assert f"got {got}" in result.error.message
    assert "\n" not in result.error.message


def test_integer_for_number_and_integral_float_for_integer_are_accepted_as_json_allows():
    result = REGISTRY.call("probe", '{"count": 2.0, "ratio": 3, "flag": true, "label": "x"}')
    assert result.ok, result.error
    assert result.content["count"] == 2 and result.content["ratio"] == 3
    # the tool receives the Python types its annotations name, whichever JSON number was sent
    assert result.content["types"] == ["int", "float", "bool"]


def test_the_schema_models_see_names_the_json_types_the_validation_enforces():
    props = REGISTRY["probe"].json_schema()["properties"]
    assert [props[n]["type"] for n in ("count", "ratio", "flag", "label")] == [
        "integer", "number", "boolean", "string"]  # fmt: skip
    assert REGISTRY["probe"].int_params == {"count"}


def test_compass_string_for_integer_is_recorded_as_a_parameter_error():
    session = CompassToolSession(sqlite3.connect(":memory:"))
    args = {"location": "Yosemite", "start_date": "2025-08-08", "end_date": "2025-08-11",
            "num_guests": "2"}  # fmt: skip
    record = session.call("search_hotel", json.dumps(args), "c1")
    assert not record.ok and record.error_category == "parameter"
    assert "parameter 'num_guests'" in record.error_message
    assert 'got a string ("2")' in record.error_message
    assert [c.error_category for c in session.take_calls()] == ["parameter"]


@pytest.mark.parametrize(
    ("registry", "name", "field"),
    [
        (compass_registry, "search_flights", "passengers"),
        (compass_registry, "search_permit_availability", "party_size"),
        (compass_registry, "notebook", "index"),
        (trips_registry, None, None),
    ],
)
def test_every_integer_parameter_of_every_suite_refuses_a_string(registry, name, field):
    reg = registry()
    pairs = [(name, field)] if name else [(n, f) for n in reg.names for f in reg[n].int_params]
    assert pairs, "the suite has integer parameters to check"
    for tool_name, param in pairs:
        result = ToolSession(reg, None).call(tool_name, json.dumps({param: "3"}))
        assert result.error_category == "parameter", (tool_name, param)
        assert f"parameter '{param}'" in result.error_message, (tool_name, param)
