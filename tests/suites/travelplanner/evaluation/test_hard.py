"""Each hard constraint on a passing and a failing plan, not applicable where unset."""

from tests.suites.travelplanner.evaluation.conftest import MB, make_query, tweak
from travelgym.suites.travelplanner.evaluation import HARD, total_cost


def verdict(cid, query, plan, sandbox):
    return HARD[cid].check(query, plan, sandbox)


def test_local_constraints_are_not_applicable_when_unset(query, plan, sandbox):
    assert len(HARD) == 5
    for cid in ("room_rule", "room_type", "cuisine", "transportation"):
        assert verdict(cid, query, plan, sandbox).passed is None, cid
    assert verdict("cuisine", make_query(cuisine=[]), plan, sandbox).passed is None


def test_total_cost(plan, sandbox):
    # one person: flights 100 + 120, meals 112, Cozy Room 2 nights × 100
    assert total_cost(make_query(), plan, sandbox) == 532
    # three: flights 220 × 3, meals 112 × 3, Cozy Room (sleeps 2) 2 rooms × 2 nights × 100
    assert total_cost(make_query(people=3), plan, sandbox) == 660 + 336 + 400
    # self-driving: one car for up to 5 (50 each way); a taxi per 4 people (1000 out)
    driven = tweak(plan, 1, transportation=f"Self-driving, from Boston to {MB}")
    driven = tweak(driven, 3, transportation=f"Self-driving, from {MB} to Boston")
    assert total_cost(make_query(people=5), driven, sandbox) == 100 + 112 * 5 + 3 * 2 * 100
    taxi = tweak(plan, 1, transportation=f"Taxi, from Boston to {MB}")
    assert total_cost(make_query(people=5), taxi, sandbox) == 2000 + 120 * 5 + 560 + 600
    # what the sandbox lacks costs nothing
    assert total_cost(make_query(), tweak(plan, 2, lunch=f"Ghost Grill, {MB}"), sandbox) == 517


def test_budget(plan, sandbox):
    assert verdict("budget", make_query(budget=532), plan, sandbox).passed is True
    result = verdict("budget", make_query(budget=531), plan, sandbox)
    assert result.passed is False and "532" in result.reason


def test_room_rule(plan, sandbox):
    assert verdict("room_rule", make_query(house_rule="smoking"), plan, sandbox).passed is False
    assert verdict("room_rule", make_query(house_rule="pets"), plan, sandbox).passed is False
    assert verdict("room_rule", make_query(house_rule="visitors"), plan, sandbox).passed is True
    house = tweak(tweak(plan, 1, accommodation=f"Beach House, {MB}"), 2,
                  accommodation=f"Beach House, {MB}")  # fmt: skip
    assert verdict("room_rule", make_query(house_rule="smoking"), house, sandbox).passed is True
    # the published script tests "parties" (an older copy misspelt it "parities")
    assert verdict("room_rule", make_query(house_rule="parties"), house, sandbox).passed is False
    assert verdict("room_rule", make_query(house_rule="parties"), plan, sandbox).passed is True


def test_room_type(plan, sandbox):
    entire = make_query(room_type="entire room")
    assert verdict("room_type", entire, plan, sandbox).passed is False
    house = tweak(tweak(plan, 1, accommodation=f"Beach House, {MB}"), 2,
                  accommodation=f"Beach House, {MB}")  # fmt: skip
    assert verdict("room_type", entire, house, sandbox).passed is True
    assert verdict("room_type", make_query(room_type="private room"), plan, sandbox).passed
    bunk = tweak(plan, 2, accommodation=f"Shared Bunk, {MB}")
    assert verdict("room_type", make_query(room_type="not shared room"), bunk,
                   sandbox).passed is False  # fmt: skip
    assert verdict("room_type", make_query(room_type="shared room"), bunk, sandbox).passed is False


def test_cuisine(plan, sandbox):
    assert verdict("cuisine", make_query(cuisine=["Chinese", "Italian"]), plan, sandbox).passed
    result = verdict("cuisine", make_query(cuisine=["Chinese", "Mexican"]), plan, sandbox)
    assert result.passed is False and "Mexican" in result.reason
    # a breakfast in the origin skips the rest of that day's meals (Nagai, the Chinese one)
    home = tweak(plan, 1, breakfast="Boston Diner, Boston")
    assert verdict("cuisine", make_query(cuisine=["Chinese"]), home, sandbox).passed is False
    assert verdict("cuisine", make_query(cuisine=["American"]), home, sandbox).passed is False


def test_transportation(plan, sandbox):
    assert verdict("transportation", make_query(transportation="no flight"), plan,
                   sandbox).passed is False  # fmt: skip
    no_drive = make_query(transportation="no self-driving")
    assert verdict("transportation", no_drive, plan, sandbox).passed is True
    driven = tweak(plan, 3, transportation=f"Self-driving, from {MB} to Boston")
    assert verdict("transportation", no_drive, driven, sandbox).passed is False
