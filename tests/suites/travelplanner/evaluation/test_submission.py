"""The submission reader on good and malformed lines, and scoring a file."""

import json

import pytest

from tests.suites.travelplanner.evaluation.conftest import good_days, make_query
from travelgym.suites.travelplanner.evaluation import (
    SubmissionError,
    read_submission,
    score_submission,
)


def line(idx, plan, **extra):
    return json.dumps({"idx": idx, "query": "q", "plan": plan, **extra})


def good_plan_json(key="days"):
    days = [d.model_dump() for d in good_days()]
    for day in days:
        day[key] = day.pop("days")
    return days


def test_good_lines(tmp_path):
    path = tmp_path / "submission.jsonl"
    path.write_text("\n".join([line(1, good_plan_json()), "", line(2, good_plan_json("day")),
                               line(3, None), line(4, [])]) + "\n")  # fmt: skip
    read = read_submission(path)
    assert [s.idx for s in read.submissions] == [1, 2, 3, 4]
    assert read.submissions[0].plan == good_days()
    assert [d.days for d in read.submissions[1].plan] == [1, 2, 3]  # "day" read as "days"
    assert read.submissions[2].plan is None and read.undelivered == {3: "no plan", 4: "no plan"}


@pytest.mark.parametrize("text, message", [
    ("{not json", "line 1: not JSON"),
    ("[1, 2]", "line 1: not a JSON object"),
    ('{"query": "q", "plan": null}', "line 1: field 'idx' must be an integer"),
    ('{"idx": "1", "plan": null}', "field 'idx'"),
    ('{"idx": true, "plan": null}', "field 'idx'"),
    ('{"idx": 1, "query": 5, "plan": null}', "field 'query'"),
])  # fmt: skip
def test_malformed_lines(text, message):
    with pytest.raises(SubmissionError, match=message):
        read_submission([text])


def test_a_line_number_and_duplicates():
    with pytest.raises(SubmissionError, match="line 3: not JSON"):
        read_submission([line(1, None), "", "oops"])
    with pytest.raises(SubmissionError, match="line 2: idx 1 already on line 1"):
        read_submission([line(1, None), line(1, None)])


@pytest.mark.parametrize("plan, reason", [
    ("Day 1: ...", "plan is a str"),
    (["Day 1"], "plan day 1 is a str"),
    ([{"days": 1, "breakfast": 3}], "plan day 1 field 'breakfast'"),
    ([{"days": "first"}], "plan day 1 field 'days'"),
])  # fmt: skip
def test_a_plan_of_the_wrong_shape_is_not_delivered(plan, reason):
    read = read_submission([line(7, plan)])
    assert read.submissions[0].plan is None and read.undelivered[7].startswith(reason)


def test_null_fields_read_as_empty():
    plan = good_plan_json()
    plan[2]["lunch"] = None
    assert read_submission([line(1, plan)]).submissions[0].plan[2].lunch == ""


def test_score_submission(sandbox):
    queries = [make_query(1), make_query(2, "medium", house_rule="smoking"), make_query(3)]
    read = read_submission([line(1, good_plan_json()), line(2, "garbled")])
    report = score_submission(queries, read, lambda q: sandbox)
    results = report["results"]
    assert [r["delivered"] for r in results] == [True, False, False]
    assert results[1]["note"].startswith("plan is a str")
    assert results[2]["note"] == "no submission line"
    assert report["metrics"]["overall"]["final_pass_rate"] == 1 / 3
    assert report["metrics"]["easy"]["final_pass_rate"] == 1 / 2
    assert report["constraints"]["room_rule"] == {"passed": 0, "total": 1}
    # plain Submission lists work too
    assert score_submission(queries, read.submissions, lambda q: sandbox)["metrics"] == report[
        "metrics"]  # fmt: skip
