"""The one bootstrap of every comparison of runs: paired over shared units, or each sample on
its own; seeded, so the same inputs give the same interval everywhere."""

from __future__ import annotations

import numpy as np

from travelgym.core.bootstrap import paired_bootstrap, unpaired_bootstrap


def test_the_unpaired_interval_holds_the_observed_difference_and_repeats():
    rng = np.random.default_rng(3)
    a, b = rng.random(40) + 0.3, rng.random(55)
    found = unpaired_bootstrap(a, b, resamples=500, seed=7)
    assert found["n"] == [40, 55]
    assert found["diff"] == round(float(a.mean() - b.mean()), 4)
    assert found["ci_low"] < found["diff"] < found["ci_high"]
    assert unpaired_bootstrap(a, b, resamples=500, seed=7) == found
    assert unpaired_bootstrap(a, b, resamples=500, seed=8) != found


def test_pairing_narrows_the_interval_of_correlated_runs():
    rng = np.random.default_rng(5)
    base = rng.random(80)
    other = base + 0.05 + rng.normal(0, 0.01, 80)  # the same units, slightly better
    paired = paired_bootstrap(other, base, resamples=500, seed=0)
    unpaired = unpaired_bootstrap(other, base, resamples=500, seed=0)
    assert paired["ci_low"] > 0  # pairing sees the gain
    assert unpaired["ci_low"] < 0 < unpaired["ci_high"]  # the units' spread hides it
    assert paired["diff"] == unpaired["diff"]


def test_an_empty_sample_has_no_interval():
    assert unpaired_bootstrap([], [1.0])["ci_low"] is None
    assert paired_bootstrap([], [])["diff"] is None
