"""bootstrap_ci: seeding, vectorised vs naive resampling, NaN handling, errors."""

from __future__ import annotations

import numpy as np
import pytest

from biasamp import BiasampError, UnavailableCIWarning
from biasamp.metrics import bootstrap_ci


def naive_ci(values, n_resamples, seed, confidence=0.95):
    """One resample at a time with the same generator stream as the vectorised code."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_resamples, len(values)))
    stats = [np.nanmean(np.asarray(values)[row], axis=0) for row in idx]
    return np.nanpercentile(
        stats, [2.5 if confidence == 0.95 else 5.0, 97.5 if confidence == 0.95 else 95.0], axis=0
    )


def test_matches_naive_resampling_1d_and_2d():
    rng = np.random.default_rng(1)
    v = rng.normal(size=25)
    low, high = bootstrap_ci(v, n_resamples=500, seed=3)
    exp = naive_ci(v, 500, 3)
    assert (low, high) == (pytest.approx(exp[0], abs=1e-14), pytest.approx(exp[1], abs=1e-14))
    assert isinstance(low, float) and low < v.mean() < high
    m = rng.normal(size=(25, 4))
    low2, high2 = bootstrap_ci(m, n_resamples=500, seed=3)
    exp2 = naive_ci(m, 500, 3)
    np.testing.assert_allclose(low2, exp2[0], atol=1e-14)
    np.testing.assert_allclose(high2, exp2[1], atol=1e-14)
    assert low2.shape == (4,)
    # rows are resampled jointly: column 0's interval equals the 1-D interval of column 0
    lo0, hi0 = bootstrap_ci(m[:, 0], n_resamples=500, seed=3)
    assert (low2[0], high2[0]) == (lo0, hi0)


def test_seeded_and_confidence():
    v = np.arange(10.0)
    assert bootstrap_ci(v, seed=5, n_resamples=300) == bootstrap_ci(v, seed=5, n_resamples=300)
    assert bootstrap_ci(v, seed=5, n_resamples=300) != bootstrap_ci(v, seed=6, n_resamples=300)
    lo90, hi90 = bootstrap_ci(v, confidence=0.9, n_resamples=2000)
    lo95, hi95 = bootstrap_ci(v, confidence=0.95, n_resamples=2000)
    assert lo95 <= lo90 < hi90 <= hi95


def test_one_unit_has_no_interval():
    with pytest.warns(UnavailableCIWarning, match="need at least two units"):
        lo, hi = bootstrap_ci([0.1])
    assert np.isnan(lo) and np.isnan(hi)
    with pytest.warns(UnavailableCIWarning):
        lo, hi = bootstrap_ci([0.1, np.nan, np.nan])
    assert np.isnan(lo) and np.isnan(hi)
    with pytest.warns(UnavailableCIWarning, match="1 confidence interval"):
        lo, hi = bootstrap_ci(
            np.array([[0.1, 1.0], [np.nan, 2.0], [np.nan, 4.0]]), n_resamples=300, seed=2
        )
    assert np.isnan(lo[0]) and np.isnan(hi[0]) and 1.0 <= lo[1] < hi[1] <= 4.0
    ref = bootstrap_ci(np.array([1.0, 2.0, 4.0]), n_resamples=300, seed=2)
    assert (lo[1], hi[1]) == ref  # the other column: the same seeded draws as alone
    with pytest.warns(UnavailableCIWarning):
        assert all(np.isnan(bootstrap_ci(lambda idx: 1.0, n=1)))


def test_degenerate_inputs_give_the_value():
    assert bootstrap_ci([0.1] * 7) == (0.1, 0.1)  # not 0.10000000000000002
    lo, hi = bootstrap_ci(np.array([[0.3, 2.0]] * 5))
    assert lo.tolist() == hi.tolist() == [0.3, 2.0]
    assert bootstrap_ci([0.1, np.nan, 0.1]) == (0.1, 0.1)  # NaN ignored


def test_nan_aware():
    v = np.array([1.0, 2.0, np.nan, 3.0, np.nan])
    lo, hi = bootstrap_ci(v, n_resamples=2000)
    assert 1.0 <= lo < 2.0 < hi <= 3.0
    # same as resampling the finite values? No: NaN rows still occupy draws, but the statistic
    # ignores them, so every resample mean lies within [1, 3]
    with pytest.warns(UnavailableCIWarning):
        lo_all, hi_all = bootstrap_ci([np.nan, np.nan])
    assert np.isnan(lo_all) and np.isnan(hi_all)


def test_callable_form():
    v = np.array([1.0, 4.0, 2.0, 8.0])
    lo, hi = bootstrap_ci(lambda idx: v[idx].mean(), n=4, n_resamples=400, seed=2)
    lo2, hi2 = bootstrap_ci(v, n_resamples=400, seed=2, statistic=np.mean)
    assert (lo, hi) == (pytest.approx(lo2, abs=1e-14), pytest.approx(hi2, abs=1e-14))
    lo3, hi3 = bootstrap_ci(
        lambda idx: np.array([v[idx].mean(), v[idx].max()]), n=4, n_resamples=50
    )
    assert lo3.shape == (2,) and np.all(lo3 <= hi3)


def test_other_statistic():
    v = np.array([1.0, 2.0, 3.0, 10.0])
    lo, hi = bootstrap_ci(v, statistic=np.nanmedian, n_resamples=1000)
    assert 1.0 <= lo <= hi <= 10.0


def test_errors():
    with pytest.raises(BiasampError, match=r"confidence must be a number in \(0, 1\); got 1.5"):
        bootstrap_ci([1.0, 2.0], confidence=1.5)
    with pytest.raises(BiasampError, match="n_resamples must be a positive integer; got 0"):
        bootstrap_ci([1.0, 2.0], n_resamples=0)
    with pytest.raises(BiasampError, match=r"values must have shape \(n,\) or \(n, k\)"):
        bootstrap_ci(np.zeros((2, 2, 2)))
    with pytest.raises(BiasampError, match=r"values must have shape"):
        bootstrap_ci([])
    with pytest.raises(
        BiasampError, match="n must be a positive integer when a callable is given; got None"
    ):
        bootstrap_ci(lambda idx: 0.0)
    with pytest.raises(BiasampError, match=r"n must equal the number of values \(2\); got 3"):
        bootstrap_ci([1.0, 2.0], n=3)
    with pytest.raises(BiasampError, match="statistic must be callable"):
        bootstrap_ci([1.0, 2.0], statistic="mean")
