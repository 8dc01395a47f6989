"""Numeric settings from environment variables: the default, a parsed value, one-line errors."""

from __future__ import annotations

import pytest

from travelgym.core.errors import UserError
from travelgym.envvars import number_from_env

NAME = "TRAVELGYM_TEST_NUMBER"


def read(**kwargs):
    return number_from_env(NAME, 5.0, float, lambda s: s >= 0, "0 or more", **kwargs)


@pytest.mark.parametrize("raw", [None, "", "  "])
def test_unset_or_blank_gives_the_default(monkeypatch, raw):
    if raw is None:
        monkeypatch.delenv(NAME, raising=False)
    else:
        monkeypatch.setenv(NAME, raw)
    assert read() == 5.0


def test_a_value_is_parsed_without_its_blanks(monkeypatch):
    monkeypatch.setenv(NAME, " 2.5 ")
    assert read() == 2.5


@pytest.mark.parametrize("raw", ["-1", "nan", "soon"])
def test_a_rejected_value_names_the_variable_and_the_requirement(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    with pytest.raises(ValueError) as info:
        read()
    assert str(info.value) == f"{NAME} must be 0 or more, got {raw!r}"


def test_the_error_type_is_the_callers(monkeypatch):
    monkeypatch.setenv(NAME, "-1")
    with pytest.raises(UserError, match=NAME):
        read(error=UserError)
