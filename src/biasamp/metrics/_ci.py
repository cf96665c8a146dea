"""Seeded percentile bootstrap confidence intervals."""

from __future__ import annotations

import logging
import warnings

import numpy as np

from .._conventions import CONFIDENCE, N_RESAMPLES
from .._errors import BiasampError, UnavailableCIWarning
from .._validation import Interval, PositiveInt, check

logger = logging.getLogger(__name__)

__all__ = ["bootstrap_ci", "resample_indices"]

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
    strata : array-like of shape (n,), optional
        A label per unit (e.g. the task of each template): each resample draws, within every
        stratum, as many units as it holds, from that stratum only (strata in order of first
        appearance, one after another). For an equal-weight mean of per-stratum means, give
        values scaled by ``n / n_stratum``.

    Returns
    -------
    (low, high) : tuple of float, or of ndarray of shape (k,) for 2-D input / vector callables
        Percentiles ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` of the bootstrap
        distribution (NaN resamples ignored); ``low == high`` for all-equal values and a
        location statistic (mean/median). Fewer than two non-NaN units (per column): NaN, with
        one :class:`~biasamp.UnavailableCIWarning`.

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
    rng = np.random.default_rng(seed)

    if callable(values_or_callable):
        if n is None:
            raise BiasampError("n must be a positive integer when a callable is given; got None")
        check(n, PositiveInt, "n")
        if n < 2:
            _warn_unavailable(1)
            return float("nan"), float("nan")
        fn = values_or_callable
        if strata is None:
            draws = (rng.integers(0, n, size=n) for _ in range(int(n_resamples)))
        else:
            draws = (
                row
                for block in _stratified(rng, _strata(strata, n), int(n_resamples))
                for row in block
            )
        stats = np.asarray([np.asarray(fn(idx), dtype=np.float64) for idx in draws])
        return _percentiles(stats, q)

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
    per = m * (values.shape[1] if values.ndim == 2 else 1)
    block = max(1, _BLOCK_VALUES // per)
    chunks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN resamples -> NaN, ignored below
        if members is None:
            for s in range(0, int(n_resamples), block):
                idx = rng.integers(0, m, size=(min(block, int(n_resamples) - s), m))
                chunks.append(np.asarray(statistic(values[idx], axis=1), dtype=np.float64))
        else:
            for draws in _stratified(rng, members, int(n_resamples)):
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
    blocks of shape (b, n), b <= n_resamples, for callers that compute their statistic faster
    than by a gather (e.g. a mean as ``counts @ values``).

    Examples
    --------
    >>> [b.shape for b in resample_indices(3, n_resamples=5, seed=0)]
    [(5, 3)]
    """
    check(n, PositiveInt, "n")
    check(n_resamples, PositiveInt, "n_resamples")
    rng = np.random.default_rng(seed)
    if strata is None:
        block = max(1, _BLOCK_VALUES // n)
        for s in range(0, int(n_resamples), block):
            yield rng.integers(0, n, size=(min(block, int(n_resamples) - s), n))
    else:
        yield from _stratified(rng, _strata(strata, n), int(n_resamples))


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


def _stratified(rng, members, n_resamples: int):
    """Blocks of stratified resamples, shape (b, n): within each stratum, in stratum order."""
    for s in range(0, n_resamples, _STRATA_BLOCK):
        b = min(_STRATA_BLOCK, n_resamples - s)
        yield np.concatenate(
            [ix[rng.integers(0, len(ix), size=(b, len(ix)))] for ix in members], axis=1
        )


def _percentiles(stats: np.ndarray, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(stats, q, axis=0)
    if np.ndim(low) == 0:
        if np.isnan(low):
            logger.warning("bootstrap_ci: every resample gave NaN")
        return float(low), float(high)
    return low, high
