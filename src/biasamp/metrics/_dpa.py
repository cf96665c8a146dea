"""Directional Predictability Amplification (Tokas et al.), DPA paper Sec. 4, Eq. 9-14."""

from __future__ import annotations

from .._conventions import canonical_direction
from ._attackers import BayesOptimalAttacker  # noqa: F401  (used in the docstring example)
from ._common import ATTRIBUTE_TO_TASK, check_rows, required_preds
from ._leakage import Encoded, TrialsResult, check_options, run_trials

__all__ = ["directional_predictability_amplification"]


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
    """DPA = (Psi_M - Psi_D) / (Psi_M + Psi_D) in one direction (DPA paper Eq. 9-14).

    ``task_to_attribute``: the attacker predicts the attribute from the ground-truth tasks;
    ``Psi_D = Q(f_D(T), A')`` and ``Psi_M = Q(f_M(T), Â)``.
    ``attribute_to_task``: it predicts the task from the ground-truth attributes;
    ``Psi_D = Q(f_D(A), T')`` and ``Psi_M = Q(f_M(A), T̂)``. The input (the prior) is the same
    for both attackers. With ``equalize``, ``A'`` (``T'``) is the ground truth with
    ``round(e * n)`` random rows changed to a different observed category, ``e`` being the
    model's error rate on that variable (1 - exact-match accuracy), as in Sec. 3.1 / 6.1.1.

    Parameters
    ----------
    attributes : array-like of shape (n,) labels or (n, n_attributes) 0/1
    tasks : array-like of shape (n,) labels or (n, n_tasks) 0/1
        Matrices are treated as one categorical variable (their distinct rows).
    direction : {"attribute_to_task", "task_to_attribute"} (aliases "A->T", "T->A")
    attribute_preds, task_preds : array-like, optional
        Hard predictions shaped like the ground truth; the direction's one is required.
    attacker, quality, n_trials, seed, equalize, test_fraction
        As for :func:`leakage_amplification` (a quality must be 0 for the worst attacker and
        non-negative, the paper's requirement).

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
    >>> r = directional_predictability_amplification(
    ...     A,
    ...     T,
    ...     direction="T->A",
    ...     attribute_preds=Ahat,
    ...     attacker=BayesOptimalAttacker(),
    ...     equalize=False,
    ...     n_trials=1,
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
    X = x.features(x.codes)
    return run_trials(
        opts,
        y,
        lambda codes: (X, codes),
        lambda m, d: (m - d) / (m + d) if m + d != 0 else float("nan"),
        metric="dpa",
        direction=direction,
    )
