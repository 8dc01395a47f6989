"""One vocabulary for one run (issue 37): ``run``, ``score`` and (where the suite has it)
``analyze`` print a suite's metrics under the same column labels, in the same order and with
the same number of decimals, the labels and decimals its declared columns
(:attr:`~travelgym.core.suite.Suite.metric_columns`) give; each printed figure is its
``score --json`` value (same key) at that precision; and ``analyze --legend`` explains every
column ``analyze`` prints."""

from __future__ import annotations

import json
import re

import pytest

from tests.golden.golden import AGENT_DIRS, RUN_ARGS, invoke
from travelgym.core.capabilities import RunAnalysis
from travelgym.core.columns import Column
from travelgym.core.registry import get_suite

SPLIT = re.compile(r"\s{2,}")  # the writer puts two spaces or more between cells, never inside
NUMBER = re.compile(r"^(-?\d+(\.\d+)?|-)$")  # a figure, or the dash of a missing one


def metric_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the first metric table of ``text`` (the one headed by ``group``
    and ``n``: the outcome table has no group)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if {"group", "n"} <= set(SPLIT.split(line.strip())))  # fmt: skip
    header = SPLIT.split(lines[start].strip())
    rows = []
    for line in lines[start + 1 :]:
        cells = SPLIT.split(line.strip())
        if len(cells) != len(header) or not all(map(NUMBER.match, cells[header.index("n") :])):
            break  # the table's end: a blank line, a note or the next table's header
        rows.append(cells)
    assert rows, f"no rows under {header}"
    return header, rows


def metrics_of(header: list[str], rows: list[list[str]]) -> dict[str, set[int]]:
    """Label -> the decimals its cells show, for each column after ``n`` (dashes skipped)."""
    out = {}
    for i, label in enumerate(header[header.index("n") + 1 :], header.index("n") + 1):
        cells = [r[i] for r in rows if r[i] != "-"]
        out[label] = {len(c.split(".")[1]) if "." in c else 0 for c in cells}
    return out


def overall_row(header: list[str], rows: list[list[str]]) -> dict[str, str]:
    row = next(r for r in rows if r[header.index("group")] == "all")
    return dict(zip(header, row, strict=True))


def check_vocabulary(suite_name: str, printed: dict[str, str], scored: dict) -> None:
    """The metric tables of ``printed`` (command -> its text) against each other, the suite's
    columns and the ``score --json`` result ``scored``."""
    suite = get_suite(suite_name)
    declared: dict[str, Column] = {c.label: c for c in suite.metric_columns}
    required = [c.label for c in suite.metric_columns if c.key not in suite.optional_metrics]
    tables = {command: metric_table(text) for command, text in printed.items()}
    shown = {command: metrics_of(*table) for command, table in tables.items()}
    first = next(iter(shown.values()))
    for command, metrics in shown.items():
        assert list(metrics) == list(first), f"{command} labels {list(metrics)} != {list(first)}"
        assert metrics == first, f"{command} decimals differ: {metrics} != {first}"
    labels = list(first)
    assert [x for x in labels if x in required] == required and set(labels) <= set(declared)
    assert labels == [x for x in declared if x in labels]  # the declared order
    for label, decimals in first.items():
        assert decimals == {declared[label].decimals}, label
    overall = scored.get("overall") or scored["metrics"]["overall"]
    for command, table in tables.items():
        row = overall_row(*table)
        for label in labels:
            column = declared[label]
            assert row[label] == column.text(overall[column.key]), (command, label)


def legend_labels(text: str) -> set[str]:
    """The first cell of each row of the legend ``analyze --legend`` prints last."""
    lines = text[text.index("\nColumns\n-------\n") :].splitlines()[4:]
    return {SPLIT.split(line.strip())[0] for line in lines if line.strip()}


def printed_labels(text: str) -> set[str]:
    """Every header label of the tables of ``analyze`` (a header follows its title's dashes;
    the outcome table's starts with ``agent``), the legend left out."""
    lines = text[: text.index("\nColumns\n-------\n")].splitlines()
    heads = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line and set(line) == {"-"}]
    heads += [line for line in lines if line.startswith("agent ")]
    return {label for line in heads for label in SPLIT.split(line.strip())}


@pytest.mark.parametrize("suite", ["compass", "behavior2trip"])
def test_run_score_and_analyze_print_one_vocabulary(golden, suite, tmp_path, monkeypatch):
    data_dir = golden.data_dir(suite)
    checked_in = golden.checked_in(suite)
    ran = invoke("run", suite, *RUN_ARGS[suite], "--out", tmp_path, data_dir=data_dir).stdout
    printed = {
        "run": ran,
        "score": invoke("score", checked_in, data_dir=data_dir).stdout,
        "score of the fresh run": invoke(
            "score", tmp_path / AGENT_DIRS[suite], data_dir=data_dir
        ).stdout,  # fmt: skip
    }
    assert isinstance(get_suite(suite), RunAnalysis)
    monkeypatch.setenv("TRAVELGYM_DATA_DIR", str(data_dir))  # analyze takes no --data-dir
    analyzed = invoke("analyze", checked_in, "--legend").stdout
    printed["analyze"] = analyzed
    check_vocabulary(suite, printed, golden.checked_in_score(suite))
    runs = {str(json.loads((checked_in / "manifest.json").read_text())["agent"])}
    unexplained = {x for x in printed_labels(analyzed) - runs
                   if x not in legend_labels(analyzed)
                   and re.sub(r"\d+$", "k", x) not in legend_labels(analyzed)}  # fmt: skip
    assert unexplained == set(), f"analyze columns without a legend: {unexplained}"
    assert len(printed_labels(analyzed) - runs) >= 15  # the parser found the tables' headers


def test_travelplanner_run_and_score_print_one_vocabulary(tmp_path, monkeypatch):
    """TravelPlanner has no checked-in run: the hand-made data of its tests, run and scored."""
    from tests.suites.travelplanner.suite_data import write_suite_data

    dataset, database = write_suite_data(tmp_path / "suite", monkeypatch)
    data_dir, out = tmp_path / "data", tmp_path / "runs"
    ran = invoke("run", "travelplanner", "--data", dataset / "validation.csv", "--database",
                 database, "--out", out, "--no-progress", data_dir=data_dir).stdout  # fmt: skip
    run_dir = out / "scripted"
    scored = json.loads(invoke("score", run_dir, "--json", data_dir=data_dir).stdout)
    printed = {"run": ran, "score": invoke("score", run_dir, data_dir=data_dir).stdout}
    assert not isinstance(get_suite("travelplanner"), RunAnalysis)  # no analyze to compare
    check_vocabulary("travelplanner", printed, scored)


def test_the_table_parser_sees_a_wrong_precision(golden):
    """The comparison above is not vacuous: a table printed with two decimals differs."""
    text = invoke("score", golden.checked_in("compass"), data_dir=golden.data_dir("compass")).stdout
    header, rows = metric_table(text)
    two = [[re.sub(r"^(\d+\.\d)$", r"\g<1>0", c) for c in r] for r in rows]
    assert metrics_of(header, rows)["OR-5"] == {1} and metrics_of(header, two)["OR-5"] == {2}
