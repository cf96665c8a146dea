"""Seeded percentile bootstrap confidence intervals."""

from __future__ import annotations

import logging
import warnings

import numpy as np

from .._conventions import CONFIDENCE, N_RESAMPLES
from .._errors import BiasampError, UnavailableCIWarning
from .._validation import Interval, PositiveInt, check

logger = logging.getLogger(__name__)

_BLOCK_VALUES = 1 << 24  # values per block of resamples
# stratified resamples are drawn this many at a time, so a seed gives the same for 1-D and 2-D
_STRATA_BLOCK = 256
_LOCATION_STATS = (np.nanmean, np.mean, np.nanmedian, np.median)


def bootstrap_ci(
    values_or_callable,
    *,
    n=None,
    confidence=CONFIDENCE,
    n_resamples=N_RESAMPLES,
    seed=0,
    statistic=np.nanmean,
    strata=None,
):
    """Seeded percentile bootstrap confidence interval, optionally stratified.

    Parameters
    ----------
    values_or_callable : array-like of shape (n,) or (n, k), or callable
        Per-unit values (rows resampled jointly), or ``fn(idx)`` -> float or (k,) array, called
        once per resample with indices of shape (n,) drawn with replacement from ``range(n)``.
    n : int, optional
        Number of units; required for a callable.
    confidence : float
    n_resamples, seed : int
    statistic : callable
        For arrays, ``statistic(samples, axis=1)`` on samples of shape (n_resamples, n[, k]).
    strata : array-like of shape (n,), optional
        A label per unit: each stratum is resampled within itself (in order of first
        appearance); for an equal-weight mean of stratum means, scale values by ``n / n_stratum``.

    Returns
    -------
    (low, high) : tuple of float, or of ndarray of shape (k,) for 2-D input / vector callables
        The ``(1 -+ confidence) / 2`` percentiles (NaN resamples ignored).

    Examples
    --------
    >>> low, high = bootstrap_ci([0.1, 0.2, 0.3, 0.4], n_resamples=2000, seed=0)
    >>> bool(0.1 <= low < 0.25 < high <= 0.4)
    True
    >>> bootstrap_ci([0.5, 0.5])
    (0.5, 0.5)
    >>> bootstrap_ci([1.0, 1.0, 3.0, 3.0], strata=["a", "a", "b", "b"])  # strata constant
    (2.0, 2.0)
    """
    conf = check(confidence, Interval(0.0, 1.0), "confidence")
    check(n_resamples, PositiveInt, "n_resamples")
    if not callable(statistic):
        raise BiasampError(f"statistic must be callable; got {statistic!r}")
    q = [100.0 * (1.0 - conf) / 2.0, 100.0 * (1.0 + conf) / 2.0]

    if callable(values_or_callable):
        if n is None:
            raise BiasampError("n must be a positive integer when a callable is given; got None")
        check(n, PositiveInt, "n")
        if n < 2:
            _warn_unavailable(1)
            return float("nan"), float("nan")
        members = None if strata is None else _strata(strata, n)
        draws = (row for block in _draws(seed, n, n_resamples, members) for row in block)
        stats = [np.asarray(values_or_callable(idx), dtype=np.float64) for idx in draws]
        return _percentiles(np.asarray(stats), q)

    values = np.asarray(values_or_callable, dtype=np.float64)
    if values.ndim not in (1, 2) or values.shape[0] < 1:
        raise BiasampError(
            f"values must have shape (n,) or (n, k) with n >= 1; got shape {values.shape}"
        )
    if n is not None and n != values.shape[0]:
        raise BiasampError(f"n must equal the number of values ({values.shape[0]}); got {n!r}")
    m = values.shape[0]
    units = np.sum(~np.isnan(values), axis=0)
    if np.any(units < 2):
        _warn_unavailable(int(np.sum(units < 2)) if values.ndim == 2 else 1)
        if np.all(units < 2):
            nan = np.full(values.shape[1:], np.nan)
            return (float("nan"), float("nan")) if values.ndim == 1 else (nan, nan.copy())
        lo, hi = bootstrap_ci(
            values[:, units >= 2],
            confidence=conf,
            n_resamples=n_resamples,
            seed=seed,
            statistic=statistic,
            strata=strata,
        )
        low, high = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
        low[units >= 2], high[units >= 2] = lo, hi
        return low, high
    members = None if strata is None else _strata(strata, m)
    if statistic in _LOCATION_STATS:
        finite = np.where(np.isnan(values), np.inf, values)
        lo, hi = finite.min(axis=0), np.where(np.isnan(values), -np.inf, values).max(axis=0)
        if np.all(lo == hi):  # one unit, or all equal: every resample gives exactly that value
            return (float(lo), float(hi)) if values.ndim == 1 else (lo.copy(), hi.copy())
    block = max(1, _BLOCK_VALUES // values.size)
    chunks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN resamples -> NaN, ignored below
        for draws in _draws(seed, m, n_resamples, members):
            for s in range(0, len(draws), block):
                idx = draws[s : s + block]
                chunks.append(np.asarray(statistic(values[idx], axis=1), dtype=np.float64))
    return _percentiles(np.concatenate(chunks, axis=0), q)


def _warn_unavailable(n_columns: int) -> None:
    warnings.warn(
        f"bootstrap_ci: {n_columns} confidence interval(s) need at least two units "
        "(non-NaN values) and are unavailable (NaN)",
        UnavailableCIWarning,
        stacklevel=3,
    )


def resample_indices(n: int, *, n_resamples: int = N_RESAMPLES, seed: int = 0, strata=None):
    """The resamples :func:`bootstrap_ci` draws for ``n`` units (the same arguments), as index
    blocks of shape (b, n), for callers that compute their statistic faster than by a gather.

    Examples
    --------
    >>> [b.shape for b in resample_indices(3, n_resamples=5, seed=0)]
    [(5, 3)]
    """
    check(n, PositiveInt, "n")
    check(n_resamples, PositiveInt, "n_resamples")
    yield from _draws(seed, n, n_resamples, None if strata is None else _strata(strata, n))


def _draws(seed, n: int, n_resamples, members):
    """Index blocks of shape (b, n) from ``default_rng(seed)``, within each stratum of members."""
    rng, n_resamples = np.random.default_rng(seed), int(n_resamples)
    block = max(1, _BLOCK_VALUES // n) if members is None else _STRATA_BLOCK
    for s in range(0, n_resamples, block):
        b = min(block, n_resamples - s)
        if members is None:
            yield rng.integers(0, n, size=(b, n))
        else:
            yield np.concatenate(
                [ix[rng.integers(0, len(ix), size=(b, len(ix)))] for ix in members], axis=1
            )


def _strata(strata, n: int) -> list[np.ndarray]:
    """Member indexes of each stratum, in order of first appearance."""
    labels = np.asarray(strata, dtype=object)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise BiasampError(
            f"strata must have one label per unit, shape ({n},); got shape {labels.shape}"
        )
    order: dict = {}
    for i, lab in enumerate(labels.tolist()):
        order.setdefault(lab, []).append(i)
    return [np.asarray(ix, dtype=np.int64) for ix in order.values()]


def _percentiles(stats: np.ndarray, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(stats, q, axis=0)
    if np.ndim(low) == 0:
        if np.isnan(low):
            logger.warning("bootstrap_ci: every resample gave NaN")
        return float(low), float(high)
    return low, high
