"""The one column definition and table writer (:mod:`travelgym.core.columns`): a column writes
its figures at its precision and scale, the table aligns them in plain text that splits back
into its cells, and the legend names each column once with its unit and JSON key."""

from __future__ import annotations

import re

import pytest

from travelgym.core.columns import Column, N, legend, present, table, text_column

RATE = Column("rates.total", "errors", legend="calls in error")
SHARE = Column("share", "share", scale=100, legend="a fraction printed as a percentage")


def test_a_column_writes_its_precision_scale_and_a_dash_for_nothing():
    assert RATE.text(12.345) == "12.3" and RATE.text(7) == "7.0" and RATE.text(None) == "-"
    assert SHARE.text(0.6667) == "66.7"
    assert Column("z", "z", unit="", decimals=2).text(-0.8712) == "-0.87"
    assert N.text(3) == "3" and RATE.text("83.3 (↑1.2)") == "83.3 (↑1.2)"  # text stays as it is
    assert RATE.heading == "errors (%)" and N.heading == "n"


def test_a_column_reads_its_dotted_key():
    record = {"rates": {"total": 4.0}, "n": 2}
    assert RATE.value(record) == 4.0 and N.value(record) == 2
    assert RATE.value({"rates": 3}) is None and RATE.value({}) is None


def test_a_label_with_two_spaces_in_a_row_is_refused():
    with pytest.raises(ValueError, match="two spaces"):
        Column("x", "bad  label")


def test_the_table_aligns_text_left_and_numbers_right_and_splits_back():
    columns = [text_column("agent"), N, RATE]
    text = table(columns, [{"agent": "a b", "n": 3, "rates": {"total": 1.25}},
                           ["longer agent", 12, None]], title="Errors")  # fmt: skip
    lines = text.splitlines()
    assert lines[:2] == ["Errors", "------"]
    assert lines[2:] == ["agent          n  errors",
                         "a b            3     1.2",
                         "longer agent  12       -"]  # fmt: skip
    assert [re.split(r"\s{2,}", x.strip()) for x in lines[2:]][1] == ["a b", "3", "1.2"]


def test_the_legend_names_each_label_once_with_unit_meaning_and_key():
    text = legend([RATE, N, Column("other.total", "errors")])
    rows = [re.split(r"\s{2,}", x.strip()) for x in text.splitlines()[3:]]
    assert rows == [["errors", "%", "calls in error", "rates.total"],
                    ["n", "-", N.legend, "n"]]  # fmt: skip


def test_optional_columns_show_only_where_some_row_has_a_value():
    judge = Column("LLM", "LLM")
    assert present([RATE, judge], [{"LLM": None}, {}], ["LLM"]) == [RATE]
    assert present([RATE, judge], [{"LLM": None}, {"LLM": 50.0}], ["LLM"]) == [RATE, judge]
