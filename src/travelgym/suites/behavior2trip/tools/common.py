"""Argument types shared by the Behavior2Trip tools: result counts, dates, preference dicts.

A ``preferences`` argument is a JSON object whose keys are a tool's preference keys (paper
Table 7) and whose values are a vocabulary value or a list of them (paper Table 9). Keys and
values are matched ignoring case, spacing and punctuation; an unknown key or value, or a value of
the wrong type, is a ``parameter`` error that lists the valid ones. Validated preferences are
canonical: ``{key: [vocab values, in the order given, without repeats]}``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, Field, WithJsonSchema

from travelgym.suites.behavior2trip.context import normalize
from travelgym.suites.behavior2trip.schema import DATES
from travelgym.toolkit import ContentError

MAX_RESULTS = 50
N = Annotated[
    int, Field(ge=1, le=MAX_RESULTS, description=f"Number of results to return (1-{MAX_RESULTS}).")
]
Preferences = dict[str, list[str]]


def _validator(keys: dict[str, tuple[str, ...]]) -> Callable[[Any], Preferences | None]:
    def check(value: dict[str, Any] | None) -> Preferences | None:
        if value is None:
            return None
        lookup = {normalize(k): k for k in keys}
        out: Preferences = {}
        for raw_key, raw in value.items():
            key = lookup.get(normalize(raw_key))
            if key is None:
                raise ValueError(
                    f"unknown preference key {raw_key!r}; valid keys: {', '.join(keys)}"
                )
            items = [raw] if isinstance(raw, str) else raw
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ValueError(f"preference {key!r} must be a string or a list of strings")
            vocab = {normalize(v): v for v in keys[key]}
            chosen: list[str] = []
            for item in items:
                canonical = vocab.get(normalize(item))
                if canonical is None:
                    raise ValueError(
                        f"unknown {key} value {item!r}; valid values: {', '.join(keys[key])}"
                    )
                if canonical not in chosen:
                    chosen.append(canonical)
            if chosen:
                out[key] = out.get(key, []) + [c for c in chosen if c not in out.get(key, [])]
        return out

    return check


def preferences_type(keys: dict[str, tuple[str, ...]]) -> Any:
    """The annotation of a ``preferences`` parameter accepting ``keys`` (key -> vocabulary)."""
    properties = {
        key: {
            "anyOf": [
                {"type": "array", "items": {"type": "string", "enum": list(values)}},
                {"type": "string", "enum": list(values)},
            ]
        }
        for key, values in keys.items()
    }
    schema = {
        "anyOf": [
            {"type": "object", "properties": properties, "additionalProperties": False},
            {"type": "null"},
        ]
    }
    return Annotated[
        dict[str, Any] | None, AfterValidator(_validator(keys)), WithJsonSchema(schema)
    ]


def parse_date(value: str, name: str) -> str:
    """A ``YYYY-MM-DD`` date inside the data window (content error otherwise)."""
    text = value.strip()
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise ContentError(
            f"{name} {value!r} is not a date in YYYY-MM-DD format; dates run from {DATES[0]} to "
            f"{DATES[-1]}"
        ) from None
    if text != day.isoformat() or day.isoformat() not in DATES:
        raise ContentError(
            f"{name} {value!r} is outside the data window: dates run from {DATES[0]} to {DATES[-1]}"
        )
    return day.isoformat()


def decode(row: dict[str, Any], *json_columns: str) -> dict[str, Any]:
    """Decode JSON text columns of a row in place and return it."""
    for col in json_columns:
        if col in row and isinstance(row[col], str):
            row[col] = json.loads(row[col])
    return row


def placeholders(values: list[Any]) -> str:
    """``?, ?, ?`` for an IN clause over ``values`` (the values themselves stay parameters)."""
    return ", ".join("?" * len(values))


def matches(order: str, total: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The end of a search tool's answer: the order it used, how many rows match and the
    ones shown."""
    return {"order": order, "total_matches": total, "count": len(results), "results": results}
