"""Model prices: a price table file is checked entry by entry; litellm's bundled cost map is read
from the installed package (told never to fetch it); a model without a price gets none."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from travelgym.core.pricing import PricingError, litellm_prices, read_pricing, run_pricing
from travelgym.core.usage_totals import usage_totals


def test_a_price_table_is_read(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"m": {"input": 2, "output": 8.5}}))
    assert read_pricing(path) == {"m": {"input": 2.0, "output": 8.5}}


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"),
    ("[]", "non-empty JSON object"),
    ('{"m": {"input": 1}}', "exactly 'input' and 'output'"),
    ('{"m": {"input": -1, "output": 1}}', "'m' input price must be a number >= 0"),
    ('{"m": {"input": true, "output": 1}}', "'m' input price must be a number >= 0"),
    ('{"m": {"input": 1, "output": "NaN"}}', "'m' output price must be a number >= 0"),
])  # fmt: skip
def test_a_bad_price_table_is_one_line(tmp_path, text, message):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(PricingError, match=message) as caught:
        read_pricing(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


@pytest.fixture()
def fake_litellm(monkeypatch):
    """An installed litellm whose bundled map prices one model."""
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    cost = {"gpt-x": {"input_cost_per_token": 2e-6, "output_cost_per_token": 1e-5},
            "broken": {"input_cost_per_token": None}}  # fmt: skip
    monkeypatch.setitem(sys.modules, "litellm", SimpleNamespace(model_cost=cost))


def test_litellms_map_is_read_locally(fake_litellm):
    import os

    assert litellm_prices("gpt-x") == pytest.approx({"input": 2.0, "output": 10.0})
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"  # never fetched at run time
    assert litellm_prices("broken") is None and litellm_prices("unknown") is None


def test_the_file_wins_and_unknown_models_get_no_price(fake_litellm):
    table = {"gpt-x": {"input": 1.0, "output": 1.0}}
    prices = run_pricing({"agent": "gpt-x", "user": "unknown"}, table)
    assert prices == {"agent": {"model": "gpt-x", "input": 1.0, "output": 1.0,
                                "source": "pricing file"}}  # fmt: skip
    prices = run_pricing({"agent": "gpt-x", "user": None}, None)
    assert prices["agent"]["source"] == "litellm model cost map"


def test_usage_totals_price_only_what_is_known():
    episodes = [{"usage": {"prompt_tokens": 1_000_000, "completion_tokens": 10},
                 "user_usage": {"prompt_tokens": 5, "completion_tokens": 5}}]  # fmt: skip
    unpriced = usage_totals(episodes)
    assert unpriced["cost_usd"] is None
    assert unpriced["user"] == {"input_tokens": 5, "output_tokens": 5}
    priced = usage_totals(episodes, {"agent": {"model": "m", "input": 3.0, "output": 100.0}})
    assert priced["cost_usd"] == {"agent": 3.001, "total": 3.001}
