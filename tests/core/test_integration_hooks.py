"""The protocol hooks integrations rely on name real parts of each installed suite."""

from __future__ import annotations

import pytest

from travelgym.core.registry import all_suites
from travelgym.runner.specs import parse_agent_spec


@pytest.mark.parametrize("suite", all_suites(), ids=lambda s: s.name)
def test_model_agent_is_a_kind_that_takes_a_model(suite):
    if suite.model_agent is None:
        pytest.fail(f"{suite.name} names no model agent")
    kinds = {k.name: k for k in suite.agent_kinds}
    assert suite.model_agent in kinds
    kind = kinds[suite.model_agent]
    assert kind.arg == "MODEL" and kind.calls_llm and not kind.choices
    spec = parse_agent_spec(suite, f"{suite.model_agent}:inspect:some-model")
    assert spec.model == "inspect:some-model"


def test_user_option_is_an_option_of_the_suites_that_have_a_user():
    with_user = [s for s in all_suites() if s.user_option is not None]
    assert [s.name for s in with_user] == ["compass"]
    for suite in with_user:
        assert suite.user_option in suite.Options.model_fields
        assert (
            getattr(suite.options(**{suite.user_option: "template"}), suite.user_option)
            == "template"
        )
