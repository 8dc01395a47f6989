"""pass^k and pass@k against values computed by hand (tau-bench's unbiased estimators)."""

from __future__ import annotations

import pytest

from travelgym.core.passk import pass_at_k, pass_at_k_table, pass_hat_k


@pytest.mark.parametrize(("n", "c", "k", "hat", "at"), [
    (4, 2, 1, 2 / 4, 2 / 4),  # one trial: both are the success rate
    (4, 2, 2, 1 / 6, 5 / 6),  # C(2,2)/C(4,2) = 1/6; 1 - C(2,2)/C(4,2) = 5/6
    (4, 3, 2, 3 / 6, 1.0),  # C(3,2)/C(4,2) = 1/2; one failure cannot fill two draws
    (3, 3, 3, 1.0, 1.0),  # k = n, all succeed
    (3, 2, 3, 0.0, 1.0),  # k = n, one failure: not all, but some
    (3, 0, 2, 0.0, 0.0),
])  # fmt: skip
def test_single_task_values(n, c, k, hat, at):
    assert pass_hat_k(n, c, k) == pytest.approx(hat)
    assert pass_at_k(n, c, k) == pytest.approx(at)


def test_out_of_range_is_refused():
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_hat_k(2, 1, 3)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(2, 3, 1)


def test_the_table_averages_over_tasks_with_enough_trials():
    ok = {"score": {"ok": True}}
    bad = {"score": {"ok": False}}
    episodes = (
        [{"task_id": "a", **ok}] * 3  # always
        + [{"task_id": "b", **ok}, {"task_id": "b", **bad}, {"task_id": "b", **bad}]  # mixed
        + [{"task_id": "c", **bad}] * 2
    )  # fmt: skip  (only two trials: not in k = 3)
    table = pass_at_k_table(episodes, lambda e: e["score"]["ok"], trials=3)
    # k=1: (1 + 1/3 + 0) / 3; k=2: hat (1 + 0 + 0) / 3, at (1 + (1 - C(2,2)/C(3,2)) + 0) / 3
    assert table["1"] == {"pass^k": round(100 * (4 / 3) / 3, 2),
                          "pass@k": round(100 * (4 / 3) / 3, 2), "tasks": 3}  # fmt: skip
    assert table["2"] == {"pass^k": round(100 / 3, 2), "pass@k": round(100 * (5 / 3) / 3, 2),
                          "tasks": 3}  # fmt: skip
    # k=3: tasks a and b only; hat (1 + 0) / 2, at (1 + 1) / 2
    assert table["3"] == {"pass^k": 50.0, "pass@k": 100.0, "tasks": 2}
