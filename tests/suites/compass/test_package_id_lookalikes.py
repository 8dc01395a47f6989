"""A COMPASS package id is accepted only exactly as the tools write it: the same numbers in
Arabic-Indic or fullwidth digits (which Python's ``\\d`` and ``int()`` take) are refused like
any unknown id, by the parser, the scorer and the recommend/validation tools; so are the
variants the issue does not list (Devanagari and superscript digits, a zero-width space,
a no-break space, leading zeros)."""

from __future__ import annotations

import pytest

from travelgym.db import connect_readonly
from travelgym.suites.compass.packages import PackageIdError, parse_package_id
from travelgym.suites.compass.scoring import score_answers
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.suites.compass.tools import CompassContext, compass_registry

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def lookalikes(package_id: str) -> dict[str, str]:
    """Spellings of ``package_id`` that are not it."""
    prefix, numbers = package_id.split("_", 1)
    return {
        "arabic-indic": f"{prefix}_{numbers.translate(ARABIC_INDIC)}",
        "fullwidth": f"{prefix}_{numbers.translate(FULLWIDTH)}",
        # variants the issue does not list
        "devanagari": f"{prefix}_{numbers.translate(DEVANAGARI)}",
        "superscript": f"{prefix}_{numbers.translate(SUPERSCRIPT)}",
        "one arabic-indic digit": package_id[:-1] + package_id[-1].translate(ARABIC_INDIC),
        "zero-width space": package_id + "\u200b",
        "no-break space": package_id + "\u00a0",
        "ideographic space": "\u3000" + package_id,
        "leading zero": f"{prefix}_0{numbers}",
    }


@pytest.fixture(scope="module")
def conn(compass_db):
    return connect_readonly(compass_db)


@pytest.fixture(scope="module")
def level3(conn):
    task = next(t for t in load_tasks() if t.level == 3)
    return task, solve(conn, task)


@pytest.mark.parametrize("package_id", ["pkg_12_3_5_2", "flight_7_1_31", "permit_3_10_2"])
def test_the_parser_refuses_every_lookalike(package_id):
    assert parse_package_id(package_id).id == package_id
    assert parse_package_id(f" {package_id}\n").id == package_id  # ASCII spaces, as before
    for how, text in lookalikes(package_id).items():
        with pytest.raises(PackageIdError):
            parse_package_id(text)
            pytest.fail(f"{how} look-alike {text!r} was accepted")


def test_the_scorer_does_not_credit_a_lookalike_of_the_optimal_plan(conn, level3):
    task, truth = level3
    optimal = truth.optimal_plan
    scored = score_answers(conn, {task.task_id: task}, {task.task_id: truth},
                           [{"task_id": task.task_id, "recommendation": optimal}])  # fmt: skip
    assert scored["overall"]["optimal"] == 100
    for component in ("hotel", "flight", "permit"):
        for how, text in lookalikes(optimal[component]).items():
            plan = {**optimal, component: text}
            scored = score_answers(conn, {task.task_id: task}, {task.task_id: truth},
                                   [{"task_id": task.task_id, "recommendation": plan}])  # fmt: skip
            overall = scored["overall"]
            assert overall["optimal"] == overall["FR"] == overall["OR5"] == 0, (component, how)


def test_the_recommend_tools_refuse_lookalikes(compass_db, level3):
    _, truth = level3
    tools = {"hotel": ("recommend_hotel", "package_ids"),
             "flight": ("recommend_flight", "flight_ids"),
             "permit": ("recommend_permit", "permit_ids")}  # fmt: skip
    context = CompassContext.from_path(compass_db)
    try:
        for component, (tool, argument) in tools.items():
            real = truth.optimal_plan[component]
            result = compass_registry().call(tool, {argument: [real], "reasoning": "r"}, context)
            assert result.ok and result.content["all_valid"], result.error
            for how, text in lookalikes(real).items():
                args = {argument: [text], "reasoning": "r"}
                result = compass_registry().call(tool, args, context)
                assert result.ok and not result.content["all_valid"], (tool, how)
    finally:
        context.close()
