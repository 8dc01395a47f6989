"""Annotation sheets of the user simulator (Appendix H): export from a real run, and Table 3's
statistics from hand-filled sheets with known answers; bad rows are reported, never fatal."""

from __future__ import annotations

import asyncio
import csv
import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from travelgym.cli import main
from travelgym.runner.batch import RunConfig, run_suite
from travelgym.runner.store import read_episodes
from travelgym.suites.compass.analysis.annotate import (
    ANNOTATION_COLUMNS,
    COLUMNS,
    FLAGS,
    RUBRICS,
    AnnotationError,
    SheetRow,
    export_sheet,
    number_ranges,
    parse_flag,
    parse_rubric,
    sample_rows,
    summarize_rows,
    summarize_sheet,
)
from travelgym.suites.compass.revisions import stated_constraints
from travelgym.suites.compass.tasks import load_tasks

TASKS = 12


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, compass_db):
    out = tmp_path_factory.mktemp("annotate-run") / "scripted-sampled"
    asyncio.run(run_suite(RunConfig("compass", "scripted:sampled", out=out,
                                      limit=TASKS, data_dir=compass_db.parent.parent,
                                      progress=False)))  # fmt: skip
    return out


def _csv_rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- export


def test_export_samples_conversations_and_their_user_turns(run_dir, tmp_path):
    out = tmp_path / "sheet.csv"
    result = export_sheet(run_dir, out, conversations=5, seed=3)
    rows = _csv_rows(out)
    assert list(rows[0]) == list(COLUMNS)
    assert result.rows == len(rows) and result.conversations == 5
    episodes = {e.episode_id: e for e in read_episodes(run_dir)}
    chosen = sorted({r["episode_id"] for r in rows})
    assert len(chosen) == 5
    expected = [(e, t.index) for e in chosen for t in episodes[e].turns
                if t.role == "user" and t.index > 0]  # fmt: skip
    assert [(r["episode_id"], int(r["turn"])) for r in rows] == expected  # turn 0 excluded
    tasks = {t.task_id: t for t in load_tasks()}
    for row in rows:
        episode = episodes[row["episode_id"]]
        turn = episode.turns[int(row["turn"])]
        before = episode.turns[int(row["turn"]) - 1]
        task = tasks[episode.task_id]
        assert row["user_response"] == turn.text
        assert row["simulator_instruction"] == (turn.prompt or "")
        assert before.role == "agent" and row["agent_message"] == before.text
        assert row["objective"] == task.objective.sentence()
        # the conversation's own persona (drawn per seed, task and trial), not the task file's
        assert row["persona_trust"] == episode.persona["trust"]
        assert row["persona_style"].startswith(f"{episode.persona['style']}: ")
        script = row["hard_constraints_so_far"].splitlines()
        revised = [i for t in episode.turns[: int(row["turn"]) + 1] for a in t.acts
                   if a.type == "revise" for i in [a.constraint_index]]  # fmt: skip
        stated = stated_constraints(task, revised)  # a revised constraint as the user said it
        now = {a.constraint_index for a in turn.acts if a.type == "revise"}
        for i, c in enumerate(task.constraints):  # the opening request reveals these
            if c.revelation == "initial":
                mark = "[revised this turn] " if i in now else ""
                assert mark + stated[i].sentence() in script
        new = [a for a in turn.acts if a.type == "reveal"]
        for act in new:
            assert f"[new this turn] {stated[act.constraint_index].sentence()}" in script
            assert f"reveal #{act.constraint_index}: " in row["instruction_details"]
        assert all(row[c] == "" for c in ANNOTATION_COLUMNS)


def test_export_is_seeded_and_jsonl_matches_csv(run_dir, tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.jsonl"
    export_sheet(run_dir, a, conversations=4, seed=11)
    export_sheet(run_dir, b, conversations=4, seed=11)
    export_sheet(run_dir, c, conversations=4, seed=11, fmt="jsonl")
    assert a.read_bytes() == b.read_bytes()
    records = [json.loads(line) for line in c.read_text().splitlines()]
    assert list(records[0]) == list(COLUMNS)
    assert all(r[k] is None for r in records for k in ANNOTATION_COLUMNS)
    as_text = [{k: "" if v is None else str(v) for k, v in r.items()} for r in records]
    assert as_text == _csv_rows(a)
    other = {r["episode_id"] for r in _csv_rows(a)}
    draws = [{r["episode_id"] for r in sample_rows(read_episodes(run_dir), {}, conversations=4,
                                                   seed=s)[0]} for s in range(5)]  # fmt: skip
    assert any(d != other for d in draws)  # the seed matters


def test_export_caps_conversations_and_responses(run_dir, tmp_path):
    episodes = read_episodes(run_dir)
    rows, eligible = sample_rows(episodes, {}, conversations=1000, seed=0)
    assert eligible <= len(episodes) and len({r["episode_id"] for r in rows}) == eligible
    few, _ = sample_rows(episodes, {}, conversations=1000, seed=0, responses=7)
    assert len(few) == 7
    order = [(r["episode_id"], r["turn"]) for r in rows]
    assert [order.index((r["episode_id"], r["turn"])) for r in few] == sorted(
        order.index((r["episode_id"], r["turn"])) for r in few
    )


def test_cli_export_and_summarize_unfilled_sheet(run_dir, tmp_path):
    out = tmp_path / "sheet.csv"
    runner = CliRunner()
    result = runner.invoke(main, ["annotate", "export", str(run_dir), "--conversations", "3",
                                  "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    n = len(_csv_rows(out))
    assert f"wrote {n} response(s) from 3 conversation(s)" in result.output
    result = runner.invoke(main, ["annotate", "summarize", str(out)])
    assert result.exit_code == 0, result.output
    assert f"0 annotated response(s) of {n} row(s)" in result.output
    assert f"unfilled rows (left out): 2-{n + 1}" in result.output
    jsonl = tmp_path / "sheet.jsonl"
    result = runner.invoke(main, ["annotate", "export", str(run_dir), "--conversations", "3",
                                  "--format", "jsonl", "--out", str(jsonl)])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["annotate", "summarize", str(jsonl), "--json"])
    assert json.loads(result.output)["unfilled"] == list(range(1, n + 1))


# --------------------------------------------------------------------------- summarize

HEADER = ["row_id", "episode_id", *FLAGS, *RUBRICS, "comment"]
# flags: hallucination, reveal-instruction, reveal-accuracy, rec-check, repetition, critical
HAND_FILLED = [
    ["a:t2", "a", "false", "false", "false", "false", "false", "false", "5", "4", ""],
    ["a:t4", "a", "FALSE", "TRUE", "false", "false", "false", "false", "4", "5", "missed it"],
    ["b:t2", "b", "no", "no", "no", "no", "no", "no", "4", "4", ""],
    ["b:t4", "b", "0", "0", "0", "1", "0", "0", "3", "3", ""],
    ["c:t2", "c", "false", "true", "false", "false", "false", "true", "2", "4.0", ""],
    ["c:t4", "c", "", "", "", "", "", "", "", "", ""],  # unfilled (row 7)
    ["c:t6", "c", "false", "false", "maybe", "false", "false", "false", "4", "4", ""],  # row 8
    ["d:t2", "d", "false", "false", "false", "false", "false", "false", "x", "6", ""],  # row 9
    ["d:t4", "d", "false", "false", "false", "false", "", "false", "4", "4", ""],  # row 10
]
# the five good rows (2-6): clarity 5, 4, 4, 3, 2 and appropriateness 4, 5, 4, 3, 4
CLARITY = [5, 4, 4, 3, 2]
APPROPRIATENESS = [4, 5, 4, 3, 4]


def _write_csv(path, rows, delimiter=",", bom=False):
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as fh:
        writer = csv.writer(fh, delimiter=delimiter)
        writer.writerow(HEADER)
        writer.writerows(rows)


def _check_known(result, first=2):
    """``first``: the number of the first data row (2 in a CSV under its header, 1 in JSONL)."""
    assert result["rows"] == 9 and result["annotated"] == 5 and result["conversations"] == 3
    assert result["unfilled"] == [first + 5]
    bad = {m["row"] - first + 2: m for m in result["malformed"]}
    assert sorted(bad) == [8, 9, 10]
    assert bad[8]["problems"] == ["revelation_accuracy_failure: 'maybe' is not true or false"]
    assert bad[9]["problems"] == ["clarity: 'x' is not an integer from 1 to 5",
                                  "contextual_appropriateness: '6' is not an integer from 1 to 5"]  # fmt: skip
    assert bad[10]["problems"] == ["repetition_failure: missing"]
    assert bad[10]["row_id"] == "d:t4"
    errors = result["errors"]
    assert {k: v["count"] for k, v in errors.items()} == {
        "factual_hallucination": 0, "revelation_instruction_failure": 2,
        "revelation_accuracy_failure": 0, "recommendation_check_failure": 1,
        "repetition_failure": 0, "critical_comments": 1,
    }  # fmt: skip
    assert errors["revelation_instruction_failure"]["rate"] == 40.0
    assert errors["recommendation_check_failure"]["rate"] == 20.0
    assert errors["factual_hallucination"]["rate"] == 0.0
    assert result["any_error"]["count"] == 3 and result["any_error"]["rate"] == 60.0
    clarity = result["rubrics"]["clarity"]
    assert clarity["n"] == 5 and clarity["mean"] == 3.6
    assert math.isclose(clarity["std"], math.sqrt(1.3), abs_tol=1e-4)  # sample std (n - 1)
    assert (clarity["median"], clarity["q1"], clarity["q3"]) == (4, 3, 4)
    assert (clarity["min"], clarity["max"]) == (2, 5)
    assert clarity["counts"] == {"1": 0, "2": 1, "3": 1, "4": 2, "5": 1}
    assert clarity["percent"]["4"] == 40.0 and clarity["below_3"] == 20.0
    appropriateness = result["rubrics"]["contextual_appropriateness"]
    assert appropriateness["mean"] == 4.0
    assert math.isclose(appropriateness["std"], math.sqrt(0.5), abs_tol=1e-4)
    assert appropriateness["counts"] == {"1": 0, "2": 0, "3": 1, "4": 3, "5": 1}
    assert appropriateness["below_3"] == 0.0


def test_summarize_hand_filled_csv(tmp_path):
    path = tmp_path / "filled.csv"
    _write_csv(path, HAND_FILLED)
    _check_known(summarize_sheet(path))


def test_summarize_spreadsheet_export_with_bom_and_semicolons(tmp_path):
    path = tmp_path / "excel.csv"
    _write_csv(path, HAND_FILLED, delimiter=";", bom=True)
    _check_known(summarize_sheet(path))


def test_summarize_hand_filled_jsonl(tmp_path):
    path = tmp_path / "filled.jsonl"
    lines = []
    for row in HAND_FILLED:
        record = dict(zip(HEADER, row, strict=True))
        for key in (*FLAGS, *RUBRICS):  # JSON types where the value is clean
            value = record[key]
            if value.lower() in ("true", "false"):
                record[key] = value.lower() == "true"
            elif value.isdigit() and key in RUBRICS and value != "6":
                record[key] = int(value)
            elif value == "":
                record[key] = None
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    _check_known(summarize_sheet(path), first=1)
    # a broken line is reported with its number and skipped
    path.write_text("\n".join(lines[:5]) + "\n{not json\n[1, 2]\n")
    result = summarize_sheet(path)
    assert result["annotated"] == 5
    assert [m["row"] for m in result["malformed"]] == [6, 7]
    assert result["malformed"][0]["problems"][0].startswith("not valid JSON")


def test_summarize_round_trip_from_export(run_dir, tmp_path):
    sheet = tmp_path / "sheet.csv"
    export_sheet(run_dir, sheet, conversations=3, seed=5)
    rows = _csv_rows(sheet)
    assert len(rows) >= 4
    fills = [("true", "false", "5", "5"), ("false", "false", "4", "3"),
             ("false", "true", "3", "4"), ("false", "false", "4", "4")]  # fmt: skip
    for row, (hallucination, critical, clarity, appropriateness) in zip(rows, fills, strict=False):
        row.update({flag: "false" for flag in FLAGS})
        row.update(factual_hallucination=hallucination, critical_comments=critical,
                   clarity=clarity, contextual_appropriateness=appropriateness)  # fmt: skip
    with open(sheet, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    result = summarize_sheet(sheet)
    assert result["annotated"] == 4 and result["rows"] == len(rows)
    assert result["unfilled"] == list(range(6, len(rows) + 2))
    assert result["errors"]["factual_hallucination"]["rate"] == 25.0
    assert result["errors"]["critical_comments"]["count"] == 1
    assert result["rubrics"]["clarity"]["mean"] == 4.0
    assert result["rubrics"]["contextual_appropriateness"]["median"] == 4.0
    assert result["conversations"] == len({r["episode_id"] for r in rows[:4]})


def test_cli_summarize_text_and_errors(tmp_path):
    path = tmp_path / "filled.csv"
    _write_csv(path, HAND_FILLED)
    runner = CliRunner()
    result = runner.invoke(main, ["annotate", "summarize", str(path)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert (
        "5 annotated response(s) of 9 row(s) from 3 conversation(s); 1 unfilled, 3 malformed" in out
    )
    lines = out.splitlines()
    assert any(line.split() == ["Revelation", "instruction-following", "failure", "40.0", "2/5"]
               for line in lines)  # fmt: skip
    assert any(line.split() == ["Any", "error", "60.0", "3/5"] for line in lines)
    assert any(line.split() == ["Clarity", "3.60", "1.14", "4.0", "3.0", "4.0", "20.0", "0/1/1/2/1"]
               for line in lines)  # fmt: skip
    assert "row 9 (d:t2): clarity: 'x' is not an integer from 1 to 5" in out
    assert "unfilled rows (left out): 7" in out
    # a sheet without the annotation columns: a clear error, not a traceback
    bad = tmp_path / "bad.csv"
    bad.write_text("row_id,clarity\na,4\n")
    result = runner.invoke(main, ["annotate", "summarize", str(bad)])
    assert result.exit_code == 1
    assert "lacks the column(s): factual_hallucination" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    result = runner.invoke(main, ["annotate", "summarize", str(empty)])
    assert result.exit_code == 0 and "0 annotated response(s) of 0 row(s)" in result.output


def test_ragged_csv_rows_are_malformed(tmp_path):
    path = tmp_path / "ragged.csv"
    good = HAND_FILLED[0]
    path.write_text(",".join(HEADER) + "\n" + ",".join(good) + "\n" + ",".join(good[:4]) + "\n"
                    + ",".join(good) + ",extra\n")  # fmt: skip
    result = summarize_sheet(path)
    assert result["annotated"] == 1
    assert [m["row"] for m in result["malformed"]] == [3, 4]
    assert "has 4 fields, the header has 11" in result["malformed"][0]["problems"][0]


def test_value_parsers():
    assert parse_flag("TRUE") is True and parse_flag(" no ") is False and parse_flag(1) is True
    assert parse_flag("x") is True and parse_flag(False) is False
    for bad in ("maybe", 2, None, "", 0.5):
        with pytest.raises(ValueError):
            parse_flag(bad)
    assert parse_rubric("4") == 4 and parse_rubric(" 5.0 ") == 5 and parse_rubric(1.0) == 1
    for bad in ("4.5", 0, 6, "", None, True, "nan", float("inf"), "four"):
        with pytest.raises(ValueError):
            parse_rubric(bad)
    assert number_ranges([9, 2, 3, 4, 7, 10]) == "2-4, 7, 9-10"


cell = st.one_of(st.none(), st.text(max_size=6), st.integers(-2, 7), st.booleans(),
                 st.floats(allow_nan=True), st.sampled_from(["true", "false", "3", "4"]))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from([*FLAGS, *RUBRICS, "episode_id"]), cell),
                max_size=12))  # fmt: skip
def test_summarize_never_raises_and_accounts_for_every_row(records):
    rows = [SheetRow(i + 2, dict(r)) for i, r in enumerate(records)]
    result = summarize_rows(rows)
    assert result["annotated"] + len(result["unfilled"]) + len(result["malformed"]) == len(rows)
    for rubric in result["rubrics"].values():
        assert sum(rubric["counts"].values()) == result["annotated"]
    json.dumps(result)


def test_missing_annotation_fields_in_jsonl_is_an_error(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text('{"row_id": "a"}\n')
    with pytest.raises(AnnotationError):
        summarize_sheet(path)
