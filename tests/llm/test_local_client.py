"""``local:`` clients' reply length: the default and its environment override (no server)."""

from __future__ import annotations

import pytest

from travelgym.llm.local_client import DEFAULT_MAX_TOKENS, MAX_TOKENS_ENV, default_max_tokens


def test_the_default_reply_length_without_the_variable(monkeypatch):
    monkeypatch.delenv(MAX_TOKENS_ENV, raising=False)
    assert default_max_tokens() == DEFAULT_MAX_TOKENS == 768


def test_the_variable_sets_the_reply_length(monkeypatch):
    monkeypatch.setenv(MAX_TOKENS_ENV, " 48 ")
    assert default_max_tokens() == 48


@pytest.mark.parametrize("raw", ["0", "-3", "many", "1.5"])
def test_a_bad_value_is_a_one_line_error_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv(MAX_TOKENS_ENV, raw)
    with pytest.raises(ValueError, match=MAX_TOKENS_ENV) as info:
        default_max_tokens()
    assert "\n" not in str(info.value)
