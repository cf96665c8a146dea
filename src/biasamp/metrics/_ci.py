"""Seeded percentile bootstrap confidence intervals."""

from __future__ import annotations

import logging
import warnings

import numpy as np

from .._errors import BiasampError, UnavailableCIWarning
from .._validation import Interval, PositiveInt, check

logger = logging.getLogger(__name__)

__all__ = ["bootstrap_ci"]

# resamples are drawn in blocks so that a block holds at most this many values
_BLOCK_VALUES = 1 << 24
_LOCATION_STATS = (np.nanmean, np.mean, np.nanmedian, np.median)


def bootstrap_ci(values_or_callable, *, n=None, confidence=0.95, n_resamples=10_000, seed=0,
                 statistic=np.nanmean):
    """Seeded percentile bootstrap confidence interval.

    Parameters
    ----------
    values_or_callable : array-like of shape (n,) or (n, k), or callable
        Per-unit values (templates, examples). A 2-D array is resampled by rows jointly
        (the same row indices for every column). A callable is called once per resample
        with an integer index array of shape (n,) (drawn with replacement from
        ``range(n)``) and must return a float or an array of shape (k,); ``n`` is then
        required and resamples are evaluated one by one.
    n : int, optional
        Number of units for the callable form (must match ``len(values)`` if given with an array).
    confidence : float, default 0.95
        Central coverage, in (0, 1).
    n_resamples : int, default 10000
    seed : int, default 0
        Seed of ``np.random.default_rng``; the same seed gives the same interval.
    statistic : callable, default numpy.nanmean
        For arrays: called as ``statistic(samples, axis=1)`` on samples of shape
        (n_resamples, n[, k]). NaN values are ignored by the default.

    Returns
    -------
    (low, high) : tuple of float, or of ndarray of shape (k,) for 2-D input / vector callables
        Percentiles ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` of the bootstrap
        distribution (NaN resamples ignored). With all-equal values and a location statistic
        (mean/median), ``low == high ==`` that value. With fewer than two units (non-NaN
        values, per column) there is no interval: NaN, announced by one
        :class:`~biasamp.UnavailableCIWarning` (never a silent zero-width interval).

    Examples
    --------
    >>> low, high = bootstrap_ci([0.1, 0.2, 0.3, 0.4], n_resamples=2000, seed=0)
    >>> bool(0.1 <= low < 0.25 < high <= 0.4)
    True
    >>> bootstrap_ci([0.5, 0.5])
    (0.5, 0.5)
    """
    conf = check(confidence, Interval(0.0, 1.0), "confidence")
    check(n_resamples, PositiveInt, "n_resamples")
    if not callable(statistic):
        raise BiasampError(f"statistic must be callable; got {statistic!r}")
    q = [100.0 * (1.0 - conf) / 2.0, 100.0 * (1.0 + conf) / 2.0]
    rng = np.random.default_rng(seed)

    if callable(values_or_callable):
        if n is None:
            raise BiasampError("n must be a positive integer when a callable is given; got None")
        check(n, PositiveInt, "n")
        if n < 2:
            _warn_unavailable(1)
            return float("nan"), float("nan")
        fn = values_or_callable
        stats = np.asarray([np.asarray(fn(rng.integers(0, n, size=n)), dtype=np.float64)
                            for _ in range(int(n_resamples))])
        return _percentiles(stats, q)

    values = np.asarray(values_or_callable, dtype=np.float64)
    if values.ndim not in (1, 2) or values.shape[0] < 1:
        raise BiasampError(f"values must have shape (n,) or (n, k) with n >= 1; got shape {values.shape}")
    if n is not None and n != values.shape[0]:
        raise BiasampError(f"n must equal the number of values ({values.shape[0]}); got {n!r}")
    m = values.shape[0]
    units = np.sum(~np.isnan(values), axis=0)
    if np.any(units < 2):
        _warn_unavailable(int(np.sum(units < 2)) if values.ndim == 2 else 1)
        if np.all(units < 2):
            nan = np.full(values.shape[1:], np.nan)
            return (float("nan"), float("nan")) if values.ndim == 1 else (nan, nan.copy())
        lo, hi = bootstrap_ci(values[:, units >= 2], confidence=conf, n_resamples=n_resamples,
                              seed=seed, statistic=statistic)
        low, high = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
        low[units >= 2], high[units >= 2] = lo, hi
        return low, high
    if statistic in _LOCATION_STATS:
        finite = np.where(np.isnan(values), np.inf, values)
        lo, hi = finite.min(axis=0), np.where(np.isnan(values), -np.inf, values).max(axis=0)
        if np.all(lo == hi):  # one unit, or all equal: every resample gives exactly that value
            return (float(lo), float(hi)) if values.ndim == 1 else (lo.copy(), hi.copy())
    per = m * (values.shape[1] if values.ndim == 2 else 1)
    block = max(1, _BLOCK_VALUES // per)
    chunks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN resamples -> NaN, ignored below
        for s in range(0, int(n_resamples), block):
            idx = rng.integers(0, m, size=(min(block, int(n_resamples) - s), m))
            chunks.append(np.asarray(statistic(values[idx], axis=1), dtype=np.float64))
    return _percentiles(np.concatenate(chunks, axis=0), q)


def _warn_unavailable(n_columns: int) -> None:
    warnings.warn(f"bootstrap_ci: {n_columns} confidence interval(s) need at least two units "
                  "(non-NaN values) and are unavailable (NaN)", UnavailableCIWarning,
                  stacklevel=3)


def _percentiles(stats: np.ndarray, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(stats, q, axis=0)
    if np.ndim(low) == 0:
        if np.isnan(low):
            logger.warning("bootstrap_ci: every resample gave NaN")
        return float(low), float(high)
    return low, high
