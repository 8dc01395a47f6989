"""Automatic quality control (Figure 10) with the rule backend: the three criteria and the
operation codes on generated and hand-broken instances, applying the codes (corrections with a
re-scored witness, removals with reasons) and the default filtered instance set (the paper's
counts kept by drawing more instances, the unfiltered set kept as its own version)."""

from __future__ import annotations

import json

import pytest

from travelgym.datafiles import read_manifest
from travelgym.suites.behavior2trip.behaviour_pool import PoiCatalog
from travelgym.suites.behavior2trip.instances import (
    INSTANCE_GENERATOR_VERSION,
    SPLITS,
    ensure_instances,
    file_sha256,
    generate_instance,
    load_instances,
)
from travelgym.suites.behavior2trip.quality import OPERATIONS, RuleJudge, operation_of
from travelgym.suites.behavior2trip.quality_apply import apply_records
from travelgym.suites.behavior2trip.quality_filter import qc_path, report_path


@pytest.fixture(scope="module")
def judge(trips_db):
    return RuleJudge(str(trips_db))


@pytest.fixture(scope="module")
def sample(trips_db):
    catalog = PoiCatalog.from_database(trips_db)
    return [generate_instance(catalog, 2024, "test", d, i)
            for d in ("easy", "medium", "hard") for i in range(4)]  # fmt: skip


@pytest.fixture(scope="module")
def clean(judge, sample):
    """An instance the rule backend keeps as it is."""
    return next(x for x in sample if judge.assess(x).operation == "no_action")


def test_records_on_generated_instances(judge, sample):
    records = [judge.assess(x) for x in sample]
    for x, r in zip(sample, records, strict=True):
        assert (r.instance_id, r.difficulty, r.plan_source) == (x.instance_id, x.difficulty,
                                                                "witness")  # fmt: skip
        assert r.operation in OPERATIONS and r.error is None
        assert all(getattr(r, c).reason for c in ("completeness", "clarity", "constraints"))
        # every generated instance carries a witness passing all its checks: criterion 3 holds
        assert r.constraints.score == 1
        assert (r.corrected_preferences is not None) == (r.operation == "correct_preference")
    assert "no_action" in {r.operation for r in records}


def test_operation_codes_follow_the_criteria(judge, clean):
    record = judge.assess(clean)
    assert record.scores() == {"completeness": 1, "clarity": 1, "constraints": 1}
    one, zero = record.completeness, record.completeness.model_copy(update={"score": 0})
    assert operation_of(one, False, one, True, one) == "no_action"
    assert operation_of(zero, False, one, True, one) == "mark_incomplete"
    assert operation_of(zero, True, one, True, one) == "delete"
    assert operation_of(one, False, zero, True, one) == "correct_preference"
    assert operation_of(one, False, zero, False, one) == "delete"
    assert operation_of(one, False, one, True, zero) == "delete"


def test_a_chain_without_a_booking_is_marked_incomplete(judge, clean):
    trajectory = [a for a in clean.trajectory if a.action_type != "book"]
    record = judge.assess(clean.model_copy(update={"trajectory": trajectory}))
    assert record.completeness.score == 0 and "nothing is booked" in record.completeness.reason
    assert record.operation in ("mark_incomplete", "delete")
    if record.clarity.score == 1:
        assert record.operation == "mark_incomplete"


def test_a_broken_funnel_is_deleted(judge, clean):
    # the first booking moved to the front: booked before it was clicked or favourited
    first = next(i for i, a in enumerate(clean.trajectory) if a.action_type == "book")
    moved = clean.trajectory[first].model_copy(update={"timestamp": "2024-01-01T00:00:00",
                                                       "session": 1})  # fmt: skip
    trajectory = [moved, *(a for i, a in enumerate(clean.trajectory) if i != first)]
    record = judge.assess(clean.model_copy(update={"trajectory": trajectory}))
    assert record.completeness.score == 0 and "broken chain" in record.completeness.reason
    assert record.operation == "delete"


def test_an_unmet_plan_is_deleted_and_a_chain_plan_is_judged(judge, clean):
    no_witness = judge.assess(clean.model_copy(update={"witness": None}))
    assert no_witness.constraints.score == 0 and no_witness.operation == "delete"
    assert no_witness.plan_source == "none"
    chain = judge.assess(clean, chain_plan="[]", has_chain=True)
    assert chain.plan_source == "chain" and chain.constraints.score == 0
    assert "chain plan fails" in chain.constraints.reason
    good = judge.assess(clean, chain_plan=f"<answer>{clean.witness}</answer>", has_chain=True)
    assert good.constraints.score == 1 and good.operation == "no_action"


def _with_extra_value(instance):
    """The instance with a stated value no behaviour shows (a cuisine, type or star level)."""
    from travelgym.suites.behavior2trip import vocab

    prefs = instance.profile.preferences
    for cat, attr, values in (("dining_requirements", "cuisine_preferences", vocab.CUISINES),
                              ("attraction_preferences", "preferred_attraction_types",
                               vocab.ATTRACTION_TYPES),
                              ("hotel_preferences", "star_requirement", vocab.STAR_LEVELS)):  # fmt: skip
        section = getattr(prefs, cat)
        if section is None:
            continue
        shown = {tuple(a.categories)[0] for a in instance.trajectory}
        extra = next(v for v in values if v not in getattr(section, attr) and v not in shown)
        section = section.model_copy(update={attr: [*getattr(section, attr), extra]})
        profile = instance.profile.model_copy(update={"preferences": prefs.model_copy(
            update={cat: section})})  # fmt: skip
        return instance.model_copy(update={"profile": profile}), f"{cat}.{attr}", extra
    raise AssertionError("no list attribute")


def test_an_unevidenced_preference_is_corrected_and_applied(judge, clean, trips_db):
    broken, attribute, extra = _with_extra_value(clean)
    record = judge.assess(broken)
    assert record.clarity.score == 0 and extra in record.clarity.reason
    assert record.operation == "correct_preference"
    cat, attr = attribute.split(".")
    assert extra not in record.corrected_preferences[cat][attr]
    kept, report = apply_records([record], [broken], str(trips_db))
    assert len(kept) == 1 and report["counts"]["correct_preference"] == 1
    fixed = kept[0]
    assert fixed.profile.preferences == clean.profile.preferences  # the drawn profile again
    (change,) = report["corrected"]
    assert change["changes"][attribute][1] == getattr(getattr(clean.profile.preferences, cat),
                                                      attr)  # fmt: skip
    assert change["witness"] == "the witness is unchanged"


def test_apply_leaves_out_marked_and_deleted_with_reasons(judge, sample, trips_db):
    records = [judge.assess(x) for x in sample]
    no_plan = sample[0].model_copy(update={"witness": None})
    records[0] = judge.assess(no_plan)
    kept, report = apply_records(records, [no_plan, *sample[1:]], str(trips_db))
    counts = report["counts"]
    assert sum(counts.values()) == len(sample) and counts["delete"] >= 1
    assert len(kept) == len(sample) - counts["delete"] - counts["mark_incomplete"]
    removed = {r["instance_id"]: r for r in report["removed"]}
    assert "constraints: no plan to judge (none)" in removed[sample[0].instance_id]["reasons"]
    assert sample[0].instance_id not in {x.instance_id for x in kept}
    # a record missing (or a judge error) keeps the instance and says so
    kept2, report2 = apply_records(records[1:], sample, str(trips_db))
    assert report2["counts"]["unjudged"] == 1 and sample[0] in kept2


def test_the_default_test_set_is_filtered_to_the_paper_counts(trips_database):
    data_dir = trips_database.path.parent.parent
    path = ensure_instances(trips_database, data_dir, splits=("test",))["test"]
    raw = ensure_instances(trips_database, data_dir, splits=("test",),
                           instances="unfiltered")["test"]  # fmt: skip
    assert path != raw and raw.name.endswith("-test-unfiltered.jsonl")
    meta, raw_meta = read_manifest(path), read_manifest(raw)
    assert meta["instances"] == "filtered" and raw_meta["instances"] == "unfiltered"
    assert meta["generator_version"] == INSTANCE_GENERATOR_VERSION
    assert meta["unfiltered_sha256"] == raw_meta["sha256"] == file_sha256(raw)
    assert meta["qc_backend"] == "rules" and set(meta["qc_counts"]) >= set(OPERATIONS)
    instances = load_instances(path)
    counts = {d: sum(x.difficulty == d for x in instances) for d in ("easy", "medium", "hard")}
    assert counts == {d: SPLITS["test"] for d in counts} and meta["count"] == 2400
    assert len({x.instance_id for x in instances}) == 2400
    # a slot whose first candidate was left out took its own next candidate: same ids
    assert {x.instance_id for x in instances} == {x.instance_id for x in load_instances(raw)}
    removed = meta["qc_counts"]["delete"] + meta["qc_counts"]["mark_incomplete"]
    report = json.loads(report_path(path).read_text())
    assert report["unfiltered"]["counts"] == meta["qc_counts"]
    assert len(report["unfiltered"]["removed"]) == removed
    replaced = {r["instance_id"] for r in report["replaced"]}
    assert replaced == {r["instance_id"] for r in report["unfiltered"]["removed"]}
    assert sum(meta["extra_candidates"].values()) >= removed
    records = qc_path(path).read_text().splitlines()
    assert len(records) >= 2400 + removed
