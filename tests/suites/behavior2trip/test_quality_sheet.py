"""The human stage of the quality control: the stratified sheet, a filled sheet round-tripping
through ``travelgym quality summarize`` with kappas computed by hand, reviewer pairs and bad
sheets as one-line errors."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from travelgym.cli import main
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.quality import Criterion, QCRecord
from travelgym.suites.behavior2trip.quality_sheet import (
    COLUMNS,
    cohen_kappa,
    export_sheet,
    stratified_sample,
)

AUTO_C1 = [1, 1, 1, 1, 1, 1, 0, 0]
AUTO_OP = ["no_action"] * 5 + ["correct_preference", "mark_incomplete", "delete"]
HUMAN_C1 = [1, 1, 1, 1, 1, 0, 0, 1]
HUMAN_C3 = [1] * 7 + [0]
HUMAN_OP = ["no_action"] * 4 + ["correct_preference", "correct_preference", "mark_incomplete",
                                "no_action"]  # fmt: skip


def _record(x, c1: int, op: str) -> QCRecord:
    one = Criterion(score=1, reason="fine")
    return QCRecord(instance_id=x.instance_id, split=x.split, difficulty=x.difficulty,
                    backend="rules", plan_source="witness",
                    completeness=Criterion(score=c1, reason="chain"), clarity=one,
                    constraints=one, operation=op)  # fmt: skip


@pytest.fixture(scope="module")
def instances(trips_database):
    data_dir = trips_database.path.parent.parent
    path = ensure_instances(trips_database, data_dir, splits=("test",),
                            instances="unfiltered")["test"]  # fmt: skip
    return load_instances(path)[:8]


def _fill(sheet, rows):
    """Write the reviewer's verdicts into the exported sheet (by row)."""
    with open(sheet, newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    out = []
    for row, (reviewer, c1, c3, op) in zip(table, rows, strict=False):
        out.append({**row, "reviewer": reviewer, "review_completeness": c1, "review_clarity": 1,
                    "review_constraints": c3, "review_operation": op})  # fmt: skip
    return out


def _write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def test_sheet_round_trip_with_hand_computed_kappa(instances, tmp_path):
    records = [_record(x, c, op) for x, c, op in zip(instances, AUTO_C1, AUTO_OP, strict=True)]
    sheet = tmp_path / "sheet.csv"
    line = export_sheet(records, {x.instance_id: x for x in instances}, sheet, sample=1000)
    assert line.startswith("8 instances of 8")
    with open(sheet, newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    assert list(exported[0]) == COLUMNS and exported[0]["review_completeness"] == ""
    assert exported[0]["instruction"] == instances[0].instruction.text
    assert "key behaviours:" in exported[0]["trajectory"]
    assert json.loads(exported[0]["preferences"]) and exported[7]["auto_operation"] == "delete"

    filled = _fill(sheet, [("alice", c1, c3, op)
                           for c1, c3, op in zip(HUMAN_C1, HUMAN_C3, HUMAN_OP, strict=True)])  # fmt: skip
    _write(sheet, filled)
    done = CliRunner().invoke(main, ["quality", "summarize", str(sheet), "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    vs = result["vs_auto"]
    # completeness: agree on 6 of 8 -> p_o = 0.75; both raters give six 1s and two 0s, so
    # p_e = (6*6 + 2*2) / 64 = 0.625 and kappa = (0.75 - 0.625) / (1 - 0.625) = 1/3
    assert vs["completeness"]["agreement"] == 0.75
    assert vs["completeness"]["kappa"] == pytest.approx(1 / 3)
    # operation: agree on rows 1-4, 6, 7 -> p_o = 0.75; auto (no_action 5, correct 1, mark 1,
    # delete 1), human (no_action 5, correct 2, mark 1, delete 0): p_e = (25 + 2 + 1 + 0) / 64
    # = 0.4375, kappa = (0.75 - 0.4375) / 0.5625 = 5/9
    assert vs["operation"]["kappa"] == pytest.approx(5 / 9)
    # constraints: 7 of 8 agree, p_e = (8*7 + 0*1) / 64 = 0.875 -> kappa 0 (chance level)
    assert vs["constraints"]["agreement"] == 0.875 and vs["constraints"]["kappa"] == 0
    # clarity: both always 1 -> agreement 1, kappa undefined
    assert vs["clarity"]["agreement"] == 1 and vs["clarity"]["kappa"] is None
    text = CliRunner().invoke(main, ["quality", "summarize", str(sheet)]).output
    assert "8 reviews of 8 instances by 1 reviewer(s)" in text and "0.333" in text

    # a second reviewer on the first four: completeness alice 1,1,1,1 vs bob 1,1,0,0 ->
    # p_o = 0.5, p_e = (4*2 + 0*2) / 16 = 0.5, kappa 0; operations all agree -> kappa 1
    bob = [{**row, "reviewer": "bob", "review_completeness": c}
           for row, c in zip(filled[:4], [1, 1, 0, 0], strict=True)]  # fmt: skip
    bob[0]["review_operation"], bob[1]["review_operation"] = "no_action", "no_action"
    bob[2]["review_operation"], bob[3]["review_operation"] = "delete", "delete"
    _write(sheet, filled + bob)
    pair = json.loads(CliRunner().invoke(main, ["quality", "summarize", str(sheet),
                                                "--json"]).output)["pairwise"]  # fmt: skip
    assert pair[0]["reviewers"] == ["alice", "bob"] and pair[0]["n"] == 4
    assert pair[0]["completeness"] == {"agreement": 0.5, "kappa": 0}
    # operation: alice no_action x4, bob no_action x2 + delete x2: p_o = 0.5,
    # p_e = (4*2) / 16 = 0.5 -> kappa 0
    assert pair[0]["operation"] == {"agreement": 0.5, "kappa": 0}


def test_cohen_kappa_by_hand():
    # 2x2 table a=20 (yes/yes), b=5, c=10, d=15 (no/no): p_o = 35/50 = 0.7; rater A says yes
    # 25 times, B 30 times: p_e = (25*30 + 25*20) / 2500 = 0.5 -> kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa([], []) is None and cohen_kappa(["y"], ["y"]) is None


def test_stratified_sample_is_proportional_and_seeded(instances):
    records = [_record(x, 1, "no_action" if i % 4 else "delete")
               for i, x in enumerate(instances * 5)]  # fmt: skip
    records = [r.model_copy(update={"instance_id": f"{r.instance_id}-{i}"})
               for i, r in enumerate(records)]  # fmt: skip
    first = stratified_sample(records, 10, seed=3)
    assert len(first) == 10 and first == stratified_sample(records, 10, seed=3)
    assert sum(r.operation == "delete" for r in first) == 3  # 10 of 40 records, 10 deletes
    assert first != stratified_sample(records, 10, seed=4)
    assert stratified_sample(records, 100, seed=0) == records


def test_bad_sheets_are_one_line_errors(tmp_path):
    runner = CliRunner()
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n")
    result = runner.invoke(main, ["quality", "summarize", str(wrong)])
    assert result.exit_code == 1 and "not a quality sheet" in result.output
    row = dict.fromkeys(COLUMNS, "")
    _write(tmp_path / "empty.csv", [row])
    result = runner.invoke(main, ["quality", "summarize", str(tmp_path / "empty.csv")])
    assert result.exit_code == 1 and "no filled review" in result.output
    _write(tmp_path / "bad.csv", [{**row, "review_completeness": "2", "review_clarity": "1",
                                   "review_constraints": "1", "review_operation": "delete"}])  # fmt: skip
    result = runner.invoke(main, ["quality", "summarize", str(tmp_path / "bad.csv")])
    assert result.exit_code == 1 and "must be 0 or 1" in result.output
    assert "Traceback" not in result.output
