"""Leakage amplification (Wang et al. 2019) and the shared attacker-trial machinery."""

from __future__ import annotations

import copy
import logging
import operator
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._errors import BiasampError, UndefinedTrialsWarning
from .._validation import Interval, PositiveInt, check
from ._attackers import BayesOptimalAttacker, MLPAttacker  # noqa: F401  (Bayes: used in docs)
from ._common import check_rows

logger = logging.getLogger(__name__)

__all__ = ["TrialsResult", "leakage_amplification"]


@dataclass(frozen=True)
class TrialsResult:
    """Result of an attacker-based metric over seeded trials (numbers, never strings).

    Attributes
    ----------
    value, mean, std : float
        Mean (twice) and population standard deviation of ``trials`` (NaN trials skipped,
        with a warning).
    trials : ndarray of shape (n_trials,)
        The metric per trial.
    data_quality, model_quality : ndarray of shape (n_trials,)
        Attacker quality on the (perturbed) data and on the model's predictions.
    error_rate : float
        The model's error rate the data labels were perturbed to (0.0 without ``equalize``).
    n_perturbed : int
        Rows whose data label was changed in each trial (``round(error_rate * n)``).
    metric, direction, quality : str
        ``"leakage"`` or ``"dpa"``; DPA's direction (None for leakage); the quality's name.
    """

    value: float
    mean: float
    std: float
    trials: np.ndarray
    data_quality: np.ndarray
    model_quality: np.ndarray
    error_rate: float
    n_perturbed: int
    metric: str
    direction: str | None
    quality: str


def accuracy(y_true, y_pred) -> float:
    """Fraction of exact matches."""
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def macro_f1(y_true, y_pred) -> float:
    """Macro-averaged F1 over the classes present in ``y_true`` or ``y_pred``."""
    classes, inv = np.unique(
        np.concatenate([np.asarray(y_true), np.asarray(y_pred)]), return_inverse=True
    )
    inv = inv.ravel()
    n = len(y_true)
    t, p = inv[:n], inv[n:]
    k = classes.size
    tp = np.bincount(t[t == p], minlength=k).astype(np.float64)
    fp = np.bincount(p, minlength=k) - tp
    fn = np.bincount(t, minlength=k) - tp
    return float(np.mean(2 * tp / (2 * tp + fp + fn)))


def resolve_quality(quality):
    if callable(quality):
        return quality, getattr(quality, "__name__", "custom")
    if quality == "accuracy":
        return accuracy, "accuracy"
    if quality == "f1":
        return macro_f1, "f1"
    raise BiasampError(
        f"quality must be one of {{'accuracy', 'f1'}} or a callable; got {quality!r}"
    )


class Encoded:
    """Categorical codes of a variable given as labels (n,) or a 0/1 matrix (n, k); ``codes``
    index ``table`` (each category's feature row); truth and prediction share one code space."""

    def __init__(self, truth, pred, name: str, pred_name: str):
        t = _as_array(truth, name)
        p = _as_array(pred, pred_name) if pred is not None else None
        if p is not None and (
            p.ndim != t.ndim or p.shape[1:] != t.shape[1:] or p.shape[0] != t.shape[0]
        ):
            raise BiasampError(
                f"{pred_name} must have the shape of {name} {t.shape}; got {p.shape}"
            )
        both = t if p is None else np.concatenate([t, p])
        if t.ndim == 2:
            if not np.all((both == 0) | (both == 1)):
                raise BiasampError(
                    f"{name} / {pred_name} as matrices must be 0/1 (hard labels); got other values"
                )
            self.table, inv = np.unique(both.astype(np.float64), axis=0, return_inverse=True)
        else:
            _, inv = np.unique(both, return_inverse=True)
            self.table = np.eye(int(inv.max()) + 1)
        inv = inv.ravel()
        n = t.shape[0]
        self.codes = inv[:n]
        self.pred_codes = inv[n:] if p is not None else None
        self.pool = np.unique(self.codes)  # categories observed in the data

    def features(self, codes):
        return self.table[codes]


def _as_array(x, name):
    arr = x.to_numpy() if isinstance(x, (pd.DataFrame, pd.Series)) else np.asarray(x)
    if arr.ndim not in (1, 2) or arr.shape[0] < 2:
        raise BiasampError(
            f"{name} must have shape (n,) labels or (n, k) 0/1 with n >= 2; got shape {arr.shape}"
        )
    if arr.ndim == 2 and not np.issubdtype(arr.dtype, np.number) and arr.dtype != np.bool_:
        raise BiasampError(f"{name} as a matrix must be numeric 0/1; got dtype {arr.dtype}")
    return arr


def perturb(codes: np.ndarray, pool: np.ndarray, rate: float, rng: np.random.Generator):
    """Change exactly ``round(rate * n)`` random rows to a different category drawn uniformly from ``pool``."""
    n = codes.shape[0]
    k = int(round(rate * n))
    out = codes.copy()
    if k == 0:
        return out, 0
    if pool.size < 2:
        logger.warning("only one category observed; the quality-equalising perturbation is skipped")
        return out, 0
    idx = rng.choice(n, size=k, replace=False)
    pos = np.searchsorted(pool, out[idx])
    out[idx] = pool[(pos + rng.integers(1, pool.size, size=k)) % pool.size]
    return out, k


class Trials(NamedTuple):
    """The checked options of an attacker metric's trials."""

    attacker: object
    qfn: Callable
    qname: str
    n_trials: int
    test_fraction: float
    seed: object
    equalize: bool


def check_options(attacker, quality, n_trials, test_fraction, *, seed, equalize) -> Trials:
    """The options of leakage and DPA, checked."""
    if attacker is not None and not (
        callable(getattr(attacker, "fit", None)) and callable(getattr(attacker, "predict", None))
    ):
        raise BiasampError(f"attacker must have fit(X, y) and predict(X) methods; got {attacker!r}")
    qfn, qname = resolve_quality(quality)
    n_trials = check(n_trials, PositiveInt, "n_trials")
    test_fraction = check(test_fraction, Interval(0.0, 1.0, closed="left"), "test_fraction")
    return Trials(attacker, qfn, qname, n_trials, test_fraction, seed, equalize)


def fit_score(attacker, X, y, *, trial_seed, qfn, split):
    """Fit a fresh copy of the attacker on the train part, return quality on the eval part."""
    att = MLPAttacker(seed=trial_seed) if attacker is None else copy.deepcopy(attacker)
    tr, ev = split
    att.fit(X[tr], y[tr])
    return float(qfn(y[ev], np.asarray(att.predict(X[ev]))))


def make_split(n, test_fraction, rng):
    if test_fraction == 0.0:
        idx = np.arange(n)
        return idx, idx
    perm = rng.permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    if n_test >= n:
        raise BiasampError(f"test_fraction={test_fraction} leaves no training rows for n={n}")
    return perm[n_test:], perm[:n_test]


def run_trials(opts: Trials, noisy: Encoded, xy, combine, *, metric, direction) -> TrialsResult:
    """Seeded trials of an attacker metric: per trial a split and ``noisy``'s codes perturbed to
    the model's error rate (``equalize``); the attacker's quality on the data, ``xy(codes)`` =
    (X, y), and on the model, ``xy(noisy.pred_codes)``; ``combine(model, data)`` the value."""
    err = 1.0 - accuracy(noisy.codes, noisy.pred_codes) if opts.equalize else 0.0
    trials, dq, mq, k = [], [], [], 0
    for ss in np.random.SeedSequence(opts.seed).spawn(opts.n_trials):
        rng = np.random.default_rng(ss)
        trial_seed = int(ss.generate_state(1)[0])
        split = make_split(noisy.codes.shape[0], opts.test_fraction, rng)
        codes, k = perturb(noisy.codes, noisy.pool, err, rng)
        d, m = (
            fit_score(opts.attacker, *xy(c), trial_seed=trial_seed, qfn=opts.qfn, split=split)
            for c in (codes, noisy.pred_codes)
        )
        trials.append(combine(m, d))
        dq.append(d)
        mq.append(m)
    trials = np.asarray(trials, dtype=np.float64)
    n_nan = int(np.isnan(trials).sum())
    if n_nan:
        msg = f"{n_nan} of {trials.size} {metric} trials undefined (zero quality on both sides) and skipped"
        warnings.warn(msg, UndefinedTrialsWarning, stacklevel=3)
    if n_nan == trials.size:
        mean = std = float("nan")
    else:
        mean, std = float(np.nanmean(trials)), float(np.nanstd(trials))
    return TrialsResult(
        value=mean,
        mean=mean,
        std=std,
        trials=trials,
        data_quality=np.asarray(dq, dtype=np.float64),
        model_quality=np.asarray(mq, dtype=np.float64),
        error_rate=float(err),
        n_perturbed=int(k),
        metric=metric,
        direction=direction,
        quality=opts.qname,
    )


def leakage_amplification(
    attributes,
    tasks,
    *,
    task_preds,
    attacker=None,
    quality="accuracy",
    n_trials=5,
    seed=0,
    equalize=True,
    test_fraction=0.0,
) -> TrialsResult:
    """Leakage amplification ``lambda_M - lambda_D`` (Wang et al. 2019; DPA paper Eq. 1-3).

    An attacker predicts the attribute from the ground-truth tasks (``lambda_D``) and from the
    predicted tasks (``lambda_M``). With ``equalize`` the ground-truth tasks are perturbed first:
    ``round(e * n)`` random rows get a different task category, ``e`` being the model's task
    error rate (1 - exact-match accuracy of ``task_preds``), so errors are not read as bias.

    Parameters
    ----------
    attributes : array-like of shape (n,) labels or (n, n_attributes) 0/1
        Target of the attacker (a matrix is one categorical variable: its distinct rows).
    tasks, task_preds : array-like of shape (n,) or (n, n_tasks)
        Ground truth and predictions (hard labels), the attacker's input.
    attacker : object with fit(X, y) and predict(X), optional
        A fresh deep copy is fitted each time. Default: :class:`MLPAttacker` seeded per trial.
        :class:`BayesOptimalAttacker` gives exact, attacker-independent values.
    quality : {"accuracy", "f1"} or callable(y_true, y_pred) -> float
        ``"f1"`` is macro-averaged over classes.
    n_trials : int, default 5
    seed : int, default 0
        Trials use ``np.random.SeedSequence(seed).spawn(n_trials)``.
    equalize : bool, default True
    test_fraction : float, default 0.0
        0 fits and scores on all rows (as the papers); otherwise a random held-out part per trial.

    Returns
    -------
    TrialsResult

    Examples
    --------
    >>> A = [0, 0, 0, 1, 1, 1]
    >>> T = [0, 0, 1, 1, 1, 0]
    >>> That = [0, 0, 0, 1, 1, 1]  # predictions reveal A perfectly
    >>> r = leakage_amplification(
    ...     A, T, task_preds=That, attacker=BayesOptimalAttacker(), equalize=False, n_trials=1
    ... )
    >>> round(r.mean, 4), r.data_quality.tolist(), r.model_quality.tolist()
    (0.3333, [0.6666666666666666], [1.0])
    """
    opts = check_options(attacker, quality, n_trials, test_fraction, seed=seed, equalize=equalize)
    a = Encoded(attributes, None, "attributes", "")
    t = Encoded(tasks, task_preds, "tasks", "task_preds")
    check_rows(a.codes.shape[0], t.codes.shape[0])
    return run_trials(
        opts, t, lambda c: (t.features(c), a.codes), operator.sub, metric="leakage", direction=None
    )
