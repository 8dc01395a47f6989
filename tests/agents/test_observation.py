"""observation_json: a tool result as the JSON text an agent reads, cut to a length."""

from __future__ import annotations

import json

from travelgym.agents.observation import observation_json


def test_a_short_payload_is_its_json_with_non_ascii_kept():
    payload = {"city": "Xi'an 西安", "n": 2}
    text = observation_json(payload, 100, " [cut]")
    assert text == '{"city": "Xi\'an 西安", "n": 2}' and json.loads(text) == payload


def test_a_long_payload_is_cut_at_the_limit_and_says_so():
    text = observation_json(["x" * 50], 20, " [cut]")
    assert text == json.dumps(["x" * 50])[:20] + " [cut]"
    assert observation_json(["x" * 15], 19, " [cut]") == json.dumps(["x" * 15])  # 19 chars: fits
