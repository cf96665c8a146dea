"""bootstrap_ci(..., strata=): stratified resampling on hand-made values, against a naive
loop, the unchanged unstratified draws, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from biasamp import BiasampError
from biasamp.metrics import bootstrap_ci, resample_indices


def naive_stratified(values, strata, n_resamples, seed, q=(2.5, 97.5)):
    """One resample at a time: 256-resample blocks, each drawing stratum by stratum (strata
    in order of first appearance), exactly the documented draw order."""
    values = np.asarray(values, dtype=float)
    labels = list(dict.fromkeys(strata))
    members = [np.array([i for i, s in enumerate(strata) if s == lab]) for lab in labels]
    rng = np.random.default_rng(seed)
    stats = []
    for start in range(0, n_resamples, 256):
        b = min(256, n_resamples - start)
        draws = [m[rng.integers(0, len(m), size=(b, len(m)))] for m in members]
        for r in range(b):
            idx = np.concatenate([d[r] for d in draws])
            stats.append(np.nanmean(values[idx], axis=0))
    return np.nanpercentile(stats, list(q), axis=0)


def test_hand_made_two_strata():
    # stratum a = {0, 1} (2 units), b = {5} (1 unit): a resample's mean is (x1 + x2 + 5) / 3
    # with x1, x2 uniform on {0, 1}: 5/3 (p 1/4), 2 (p 1/2), 7/3 (p 1/4); the 2.5% and
    # 97.5% percentiles of 10,000 resamples are therefore exactly 5/3 and 7/3
    lo, hi = bootstrap_ci([0.0, 1.0, 5.0], strata=["a", "a", "b"], n_resamples=10_000, seed=0)
    assert (lo, hi) == (pytest.approx(5 / 3, abs=1e-15), pytest.approx(7 / 3, abs=1e-15))
    # unstratified, a resample may hold 5 zero to three times: a much wider interval
    lo_u, hi_u = bootstrap_ci([0.0, 1.0, 5.0], n_resamples=10_000, seed=0)
    assert lo_u < 1.0 and hi_u > 3.0
    # constant within every stratum: every resample gives the mean exactly
    assert bootstrap_ci([1.0, 1.0, 3.0, 3.0], strata=["a", "a", "b", "b"]) == (2.0, 2.0)
    assert bootstrap_ci([2.0, 4.0], strata=["x", "y"]) == (3.0, 3.0)


def test_matches_the_naive_loop_1d_and_2d():
    rng = np.random.default_rng(7)
    v = rng.normal(size=23)
    strata = list(rng.choice(["p", "q", "r"], size=23))
    for n_res in (300, 700):  # one block and several blocks
        lo, hi = bootstrap_ci(v, strata=strata, n_resamples=n_res, seed=4)
        exp = naive_stratified(v, strata, n_res, 4)
        assert (lo, hi) == (pytest.approx(exp[0], abs=1e-13), pytest.approx(exp[1], abs=1e-13))
    m = rng.normal(size=(23, 3))
    lo, hi = bootstrap_ci(m, strata=strata, n_resamples=600, seed=4)
    exp = naive_stratified(m, strata, 600, 4)
    np.testing.assert_allclose(lo, exp[0], atol=1e-13)
    np.testing.assert_allclose(hi, exp[1], atol=1e-13)
    # the same resamples for 1-D and 2-D values: column 0 alone gives column 0's interval
    lo0, hi0 = bootstrap_ci(m[:, 0], strata=strata, n_resamples=600, seed=4)
    assert (lo[0], hi[0]) == (pytest.approx(lo0, abs=1e-13), pytest.approx(hi0, abs=1e-13))


def test_each_resample_keeps_the_composition():
    strata = ["a"] * 3 + ["b"] * 2 + ["c"]
    seen = []

    def stat(idx):
        seen.append(np.asarray(idx))
        return float(len(idx))

    bootstrap_ci(stat, n=6, strata=strata, n_resamples=50, seed=1)
    assert len(seen) == 50
    for idx in seen:
        assert len(idx) == 6
        assert set(idx[:3]) <= {0, 1, 2} and set(idx[3:5]) <= {3, 4} and list(idx[5:]) == [5]


def test_unstratified_draws_are_unchanged():
    v = np.random.default_rng(2).normal(size=40)
    assert bootstrap_ci(v, strata=None, n_resamples=999, seed=8) == bootstrap_ci(
        v, n_resamples=999, seed=8
    )
    # resample_indices yields bootstrap_ci's resamples, with or without strata
    for strata in (None, [i % 4 for i in range(40)]):
        means = np.concatenate(
            [
                v[idx].mean(axis=1)
                for idx in resample_indices(40, n_resamples=999, seed=8, strata=strata)
            ]
        )
        exp = np.percentile(means, [2.5, 97.5])
        got = bootstrap_ci(v, strata=strata, n_resamples=999, seed=8)
        assert got == (pytest.approx(exp[0], abs=1e-14), pytest.approx(exp[1], abs=1e-14))


@pytest.mark.parametrize(
    "call, pattern",
    [
        (
            lambda: bootstrap_ci([1.0, 2.0, 3.0, 4.0], strata=["a", "b", "a"]),
            r"strata must have one label per unit, shape \(4,\); got shape \(3,\)",
        ),
        (
            lambda: bootstrap_ci(lambda i: 0.0, n=3, strata=["a"]),
            r"strata must have one label per unit, shape \(3,\); got shape \(1,\)",
        ),
        (lambda: list(resample_indices(0)), r"n must be a positive integer"),
    ],
)
def test_errors(call, pattern):
    with pytest.raises(BiasampError, match=pattern):
        call()
