"""The attacker metrics, one trial loop: leakage amplification (Wang et al. 2019) and DPA."""

from __future__ import annotations

import copy
import logging
import operator
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._conventions import canonical_direction
from .._errors import BiasampError, UndefinedTrialsWarning
from .._validation import Interval, PositiveInt, check
from ._attackers import BayesOptimalAttacker, MLPAttacker  # noqa: F401  (Bayes: used in docs)
from ._common import ATTRIBUTE_TO_TASK, check_rows, required_preds

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrialsResult:
    """Result of an attacker-based metric over seeded trials: ``value`` = ``mean`` and ``std``
    (population) of ``trials`` (NaN trials skipped, warned); per trial ``trials``, the attacker's
    ``data_quality`` (perturbed data) and ``model_quality``; ``error_rate``, ``n_perturbed``,
    ``metric``, ``direction``, ``quality``."""

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
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def macro_f1(y_true, y_pred) -> float:
    """Macro-averaged F1 over the classes present in ``y_true`` or ``y_pred``."""
    classes, inv = np.unique(
        np.concatenate([np.asarray(y_true), np.asarray(y_pred)]), return_inverse=True
    )
    t, p = np.split(inv.ravel(), [len(y_true)])
    k = classes.size
    tp = np.bincount(t[t == p], minlength=k).astype(np.float64)
    fp = np.bincount(p, minlength=k) - tp
    fn = np.bincount(t, minlength=k) - tp
    return float(np.mean(2 * tp / (2 * tp + fp + fn)))


QUALITIES = {"accuracy": accuracy, "f1": macro_f1}


class Encoded:
    """Categorical codes of truth and prediction (one code space) and each code's feature row."""

    def __init__(self, truth, pred, name: str, pred_name: str):
        t = _as_array(truth, name)
        p = _as_array(pred, pred_name) if pred is not None else None
        if p is not None and p.shape != t.shape:
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
        self.codes, pred_codes = np.split(inv.ravel(), [t.shape[0]])
        self.pred_codes = pred_codes if p is not None else None
        self.pool = np.unique(self.codes)  # categories observed in the data


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


Trials = namedtuple("Trials", "attacker qfn qname n_trials test_fraction seed equalize")


def check_options(attacker, quality, n_trials, test_fraction, *, seed, equalize) -> Trials:
    if attacker is not None and not (
        callable(getattr(attacker, "fit", None)) and callable(getattr(attacker, "predict", None))
    ):
        raise BiasampError(f"attacker must have fit(X, y) and predict(X) methods; got {attacker!r}")
    if callable(quality):
        qfn, qname = quality, getattr(quality, "__name__", "custom")
    elif isinstance(quality, str) and quality in QUALITIES:
        qfn, qname = QUALITIES[quality], quality
    else:
        raise BiasampError(
            f"quality must be one of {{'accuracy', 'f1'}} or a callable; got {quality!r}"
        )
    n_trials = check(n_trials, PositiveInt, "n_trials")
    test_fraction = check(test_fraction, Interval(0.0, 1.0, closed="left"), "test_fraction")
    return Trials(attacker, qfn, qname, n_trials, test_fraction, seed, equalize)


def fit_score(attacker, X, y, *, trial_seed, qfn, split):
    """Quality on the eval part of a fresh copy of the attacker fitted on the train part."""
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
    """Seeded trials of ``combine(quality on the model, quality on the perturbed data)``."""
    err = 1.0 - accuracy(noisy.codes, noisy.pred_codes) if opts.equalize else 0.0
    rows, k = [], 0
    for ss in np.random.SeedSequence(opts.seed).spawn(opts.n_trials):
        rng = np.random.default_rng(ss)
        trial_seed = int(ss.generate_state(1)[0])
        split = make_split(noisy.codes.shape[0], opts.test_fraction, rng)
        codes, k = perturb(noisy.codes, noisy.pool, err, rng)
        d, m = (
            fit_score(opts.attacker, *xy(c), trial_seed=trial_seed, qfn=opts.qfn, split=split)
            for c in (codes, noisy.pred_codes)
        )
        rows.append((combine(m, d), d, m))
    trials, dq, mq = np.asarray(rows, dtype=np.float64).T
    n_nan = int(np.isnan(trials).sum())
    if n_nan:
        msg = f"{n_nan} of {trials.size} {metric} trials undefined (zero quality on both sides) and skipped"
        warnings.warn(msg, UndefinedTrialsWarning, stacklevel=3)
    mean = std = float("nan")
    if n_nan < trials.size:
        mean, std = float(np.nanmean(trials)), float(np.nanstd(trials))
    return TrialsResult(
        mean, mean, std, trials, dq, mq, float(err), int(k), metric, direction, opts.qname
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

    Parameters
    ----------
    attributes
        The attacker's target: (n,) labels or (n, n_attributes) 0/1.
    tasks, task_preds
        Ground truth and hard predictions of shape (n,) or (n, n_tasks), the attacker's input.
    attacker
        An object with fit(X, y) and predict(X); default :class:`MLPAttacker` seeded per trial.
    quality
        ``"accuracy"``, ``"f1"`` or a callable(y_true, y_pred) -> float.
    n_trials, seed
        Trials use ``np.random.SeedSequence(seed).spawn(n_trials)``.
    equalize
        Perturb the data to the model's error rate first (docs/metrics.md).
    test_fraction
        0 fits and scores on all rows (as the papers), else a random held-out part per trial.

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
        opts, t, lambda c: (t.table[c], a.codes), operator.sub, metric="leakage", direction=None
    )


def directional_predictability_amplification(
    attributes,
    tasks,
    *,
    direction,
    attribute_preds=None,
    task_preds=None,
    attacker=None,
    quality="accuracy",
    n_trials=5,
    seed=0,
    equalize=True,
    test_fraction=0.0,
) -> TrialsResult:
    """DPA = (Psi_M - Psi_D) / (Psi_M + Psi_D) in one direction (DPA paper Sec. 4, Eq. 9-14).

    Parameters
    ----------
    attributes, tasks
        (n,) labels or (n, k) 0/1.
    direction
        ``"attribute_to_task"`` or ``"task_to_attribute"`` (aliases ``"A->T"``, ``"T->A"``).
    attribute_preds, task_preds
        Hard predictions shaped like the ground truth; the direction's one is required.
    attacker, quality, n_trials, seed, equalize, test_fraction
        As for :func:`leakage_amplification` (a quality is 0 for the worst attacker).

    Returns
    -------
    TrialsResult
        ``data_quality`` is Psi_D, ``model_quality`` Psi_M per trial; ``trials`` the DPA values.

    Examples
    --------
    >>> # DPA paper Table 2a (unbalanced COMPAS), T->A, exact with the Bayes attacker:
    >>> T = [0] * 2631 + [1] * 2647
    >>> A = [0] * 1229 + [1] * 1402 + [0] * 874 + [1] * 1773
    >>> Ahat = [0] * 1056 + [1] * 1575 + [0] * 1115 + [1] * 1532
    >>> exact = dict(attacker=BayesOptimalAttacker(), equalize=False, n_trials=1)
    >>> r = directional_predictability_amplification(
    ...     A, T, direction="T->A", attribute_preds=Ahat, **exact
    ... )
    >>> round(r.mean, 6)  # (3107 - 3175) / (3107 + 3175)
    -0.010824
    """
    direction = canonical_direction(direction)
    opts = check_options(attacker, quality, n_trials, test_fraction, seed=seed, equalize=equalize)
    preds, name = required_preds(direction, task_preds, attribute_preds)
    if direction == ATTRIBUTE_TO_TASK:
        x = Encoded(attributes, None, "attributes", "")
        y = Encoded(tasks, preds, "tasks", name)
    else:
        x = Encoded(tasks, None, "tasks", "")
        y = Encoded(attributes, preds, "attributes", name)
    check_rows(x.codes.shape[0], y.codes.shape[0])
    X = x.table[x.codes]
    return run_trials(
        opts,
        y,
        lambda codes: (X, codes),
        lambda m, d: (m - d) / (m + d) if m + d != 0 else float("nan"),
        metric="dpa",
        direction=direction,
    )
