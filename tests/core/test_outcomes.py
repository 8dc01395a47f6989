"""Episode outcomes: the category comes from what was raised, old records are inferred from
their termination and error, infra errors are counted and left out of what is scored."""

from __future__ import annotations

import pytest

from travelgym.core.outcomes import (
    InfraError,
    add_outcome,
    classify,
    count_outcomes,
    outcome_of,
    scored_episodes,
    settle,
    warning_line,
)
from travelgym.llm.protocol import LLMError


@pytest.mark.parametrize("category", ["connection", "timeout", "server", "rate_limit", "auth",
                                      "bad_request", "bad_response", "budget"])  # fmt: skip
def test_a_failed_model_call_is_an_infra_error_by_its_category(category):
    assert classify(LLMError(category, "x")) == ("infra_error", f"agent {category}")
    assert classify(LLMError(category, "x"), "user") == ("infra_error", f"user {category}")


def test_the_models_own_protocol_breach_is_a_model_error():
    assert classify(LLMError("too_many_tool_calls", "x")) == ("model_error",
                                                              "agent too_many_tool_calls")  # fmt: skip


def test_the_message_never_decides():
    """A bug whose message reads like a model's failure is still a framework bug, and an
    InfraError is one whatever it says."""
    assert classify(ValueError("agent: too_many_tool_calls: ...")) == ("infra_error",
                                                                       "internal: ValueError")  # fmt: skip
    assert classify(InfraError("sandbox", "the model's code timed out")) == ("infra_error",
                                                                             "sandbox")  # fmt: skip


class _Episode:
    def __init__(self, termination: str) -> None:
        self.termination, self.outcome, self.cause = termination, None, None


@pytest.mark.parametrize(("termination", "expected"), [
    ("accepted", ("completed", None)), ("answered", ("completed", None)),
    ("turn_limit", ("model_error", "turn_limit")), ("step_limit", ("model_error", "step_limit")),
])  # fmt: skip
def test_an_ending_without_an_error_is_read_from_the_termination(termination, expected):
    episode = _Episode(termination)
    settle(episode)
    assert (episode.outcome, episode.cause) == expected


def test_the_first_failure_is_the_cause():
    episode = _Episode("error")
    settle(episode, LLMError("connection", "refused"))
    settle(episode, ValueError("later"))
    assert (episode.outcome, episode.cause) == ("infra_error", "agent connection")


@pytest.mark.parametrize(("stored", "expected"), [
    ({"termination": "accepted"}, ("completed", None)),
    ({"termination": "turn_limit"}, ("model_error", "turn_limit")),
    ({"termination": "error", "error": "agent: connection: refused (after 6 attempts)"},
     ("infra_error", "agent connection")),
    ({"termination": "error", "error": "user: server: 503"}, ("infra_error", "user server")),
    ({"termination": "error", "error": "KeyError: 'x'\nTraceback ..."},
     ("infra_error", "internal: KeyError")),
])  # fmt: skip
def test_episodes_saved_before_outcomes_are_inferred(stored, expected):
    line = {"format_version": "1", **stored}
    upgraded = add_outcome(line)
    assert upgraded["format_version"] == "2"
    assert (upgraded["outcome"], upgraded["cause"]) == expected == outcome_of(line)


def test_a_recorded_outcome_is_taken_as_recorded():
    episode = {"termination": "error", "error": "agent: connection: x", "outcome": "completed"}
    assert outcome_of(episode) == ("completed", None)


def test_counts_and_what_is_scored():
    episodes = [{"outcome": "completed"}, {"outcome": "model_error", "cause": "turn_limit"},
                {"outcome": "infra_error", "cause": "agent connection"},
                {"outcome": "infra_error", "cause": "agent connection"},
                {"outcome": "infra_error", "cause": "sandbox"}]  # fmt: skip
    counts = count_outcomes(episodes)
    assert counts == {"n": 5, "completed": 1, "model_errors": 1, "infra_errors": 3,
                      "infra_error_pct": 60.0,
                      "infra_causes": {"agent connection": 2, "sandbox": 1}}  # fmt: skip
    assert scored_episodes(episodes) == episodes[:2]
    assert scored_episodes(episodes, count_errors_as_failures=True) == episodes
    line = warning_line(counts)
    assert line is not None and line.startswith("warning: 3 of 5 episodes")
    assert "agent connection, 2x" in line and "--resume --retry-errors" in line
    assert warning_line(count_outcomes(episodes[:2])) is None
