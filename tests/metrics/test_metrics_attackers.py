"""Attackers, leakage amplification and DPA: exact values with the Bayes attacker, errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from biasamp import BiasampError
from biasamp.metrics import (
    BayesOptimalAttacker,
    MLPAttacker,
    TrialsResult,
    directional_predictability_amplification,
    leakage_amplification,
)
from biasamp.metrics._leakage import macro_f1, perturb

BAYES = BayesOptimalAttacker()


def compas(tab_true, tab_pred):
    """Label vectors (x, y, y_hat) reproducing count tables indexed [x][y]."""
    x, y, yh = [], [], []
    for i in range(2):
        x += [i] * (tab_true[i][0] + tab_true[i][1])
        y += [0] * tab_true[i][0] + [1] * tab_true[i][1]
        yh += [0] * tab_pred[i][0] + [1] * tab_pred[i][1]
    return np.array(x), np.array(y), np.array(yh)


# ---------------------------------------------------------------- attackers


def test_bayes_attacker_lookup_ties_and_unseen():
    X = np.array([[0, 1], [0, 1], [0, 1], [1, 0], [1, 0], [1, 1]])
    y = np.array(["b", "b", "a", "a", "b", "b"])
    att = BayesOptimalAttacker().fit(X, y)
    # (0,1): b twice -> b; (1,0): a/b tie -> smallest 'a'; (1,1): b; unseen (0,0): overall majority b
    assert att.predict([[0, 1], [1, 0], [1, 1], [0, 0]]).tolist() == ["b", "a", "b", "b"]


def test_mlp_attacker_is_seeded_and_learns():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(200, 2)).astype(float)
    y = (X[:, 0] != X[:, 1]).astype(int)  # XOR needs the hidden layer
    p1 = MLPAttacker(seed=4).fit(X, y).predict(X)
    p2 = MLPAttacker(seed=4).fit(X, y).predict(X)
    assert np.array_equal(p1, p2)
    assert np.mean(p1 == y) == 1.0
    lr = MLPAttacker(hidden=0, seed=1).fit(X, X[:, 0].astype(int))
    assert np.array_equal(lr.predict(X), X[:, 0].astype(int))
    with pytest.raises(BiasampError, match="predict called before fit"):
        MLPAttacker().predict(X)
    with pytest.raises(BiasampError, match=r"attacker target y must have shape \(200,\)"):
        MLPAttacker().fit(X, y[:3])


def test_importing_metrics_does_not_import_torch():
    import subprocess

    code = (
        "import sys, biasamp.metrics; print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# ---------------------------------------------------------------- DPA, exact with the Bayes attacker


def test_dpa_compas_unbalanced_exact():
    # Table 2a. T->A: Bayes on T predicts A=1 for both T (1402 > 1229, 1773 > 874): Psi_D = 3175/5278;
    # on Â: 1575 > 1056, 1532 > 1115 -> Psi_M = 3107/5278. DPA = (3107 - 3175) / (3107 + 3175)
    T, A, Ahat = compas([[1229, 1402], [874, 1773]], [[1056, 1575], [1115, 1532]])
    r = directional_predictability_amplification(
        A, T, direction="T->A", attribute_preds=Ahat, attacker=BAYES, equalize=False, n_trials=2
    )
    assert isinstance(r, TrialsResult)
    assert r.mean == pytest.approx(-68 / 6282, abs=1e-15) and r.std == 0.0
    assert (
        r.data_quality.tolist() == [3175 / 5278] * 2
        and r.model_quality.tolist() == [3107 / 5278] * 2
    )
    assert (r.direction, r.metric, r.quality, r.error_rate, r.n_perturbed) == (
        "task_to_attribute",
        "dpa",
        "accuracy",
        0.0,
        0,
    )
    # A->T: Psi_D = (1229 + 1773)/5278, Psi_M = (1165 + 1629)/5278 -> (2794 - 3002) / (2794 + 3002)
    A2, T2, That = compas([[1229, 874], [1402, 1773]], [[1165, 938], [1546, 1629]])
    r = directional_predictability_amplification(
        A2, T2, direction="A->T", task_preds=That, attacker=BAYES, equalize=False, n_trials=1
    )
    assert r.value == pytest.approx(-208 / 5796, abs=1e-15)


def test_dpa_compas_balanced_exact():
    # Table 2b; the data is a tie everywhere: Bayes predicts label 0 -> Psi_D = 1748/3496 = .5.
    # T->A: Psi_M = (1083 + 896)/3496 -> DPA = 231/3727 = .0620 (paper, NN attacker: .061 ± .008)
    T, A, Ahat = compas([[874, 874], [874, 874]], [[1083, 665], [896, 852]])
    r = directional_predictability_amplification(
        A, T, direction="T->A", attribute_preds=Ahat, attacker=BAYES, equalize=False, n_trials=1
    )
    assert r.value == pytest.approx(231 / 3727, abs=1e-15)
    # A->T: Psi_M = (1145 + 948)/3496 -> DPA = 345/3841 = .0898 (paper: .100 ± .004)
    A2, T2, That = compas([[874, 874], [874, 874]], [[1145, 603], [948, 800]])
    r = directional_predictability_amplification(
        A2, T2, direction="A->T", task_preds=That, attacker=BAYES, equalize=False, n_trials=1
    )
    assert r.value == pytest.approx(345 / 3841, abs=1e-15)


def test_dpa_equalisation_is_seeded_and_exact_in_count():
    T, A, Ahat = compas([[1229, 1402], [874, 1773]], [[1056, 1575], [1115, 1532]])
    r1 = directional_predictability_amplification(
        A, T, direction="T->A", attribute_preds=Ahat, attacker=BAYES, n_trials=4, seed=1
    )
    r2 = directional_predictability_amplification(
        A, T, direction="T->A", attribute_preds=Ahat, attacker=BAYES, n_trials=4, seed=1
    )
    err = float(np.mean(Ahat != A))
    assert r1.error_rate == pytest.approx(err, abs=1e-15)
    assert r1.n_perturbed == round(err * len(A))
    np.testing.assert_array_equal(r1.trials, r2.trials)
    assert r1.trials.shape == (4,) and r1.std == pytest.approx(np.std(r1.trials), abs=1e-15)
    assert r1.mean == pytest.approx(np.mean(r1.trials), abs=1e-15)
    # perturbation lowers the data's predictability, so DPA rises above the unperturbed -0.0108
    assert r1.mean > -68 / 6282


def test_perturb_changes_exactly_k_rows_to_other_categories():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=1000)
    pool = np.array([0, 1, 2])
    out, k = perturb(codes, pool, 0.3137, rng)
    assert k == 314 and int(np.sum(out != codes)) == 314
    assert set(np.unique(out)) <= {0, 1, 2}
    same, k0 = perturb(codes, np.array([1]), 0.5, rng)  # one category: nothing to flip
    assert k0 == 0 and np.array_equal(same, codes)


def test_macro_f1_hand_computed():
    # class 0: tp=1, fp=1, fn=1 -> F1 = 2/4; class 1: tp=1, fp=1, fn=1 -> 2/4; class 2: tp=1, fp=0, fn=0 -> 1
    y = [0, 0, 1, 1, 2]
    p = [0, 1, 1, 0, 2]
    assert macro_f1(y, p) == pytest.approx((0.5 + 0.5 + 1.0) / 3, abs=1e-15)
    T, A, Ahat = compas([[3, 1], [1, 3]], [[1, 3], [3, 1]])
    r = directional_predictability_amplification(
        A,
        T,
        direction="T->A",
        attribute_preds=Ahat,
        attacker=BAYES,
        equalize=False,
        quality="f1",
        n_trials=1,
    )
    # data: predict A=T, 6/8 right, F1 per class 3/4 -> .75; model: Â = 1 - T -> F1 .75 as well -> 0
    assert r.value == 0.0 and r.quality == "f1"


def test_dpa_default_attacker_runs_and_holdout():
    rng = np.random.default_rng(2)
    A = rng.integers(0, 2, 300)
    T = np.eye(4, dtype=int)[(A * 2 + rng.integers(0, 2, 300)) % 4]  # tasks depend on A
    That = T.copy()
    r = directional_predictability_amplification(
        A, T, direction="A->T", task_preds=That, n_trials=2, test_fraction=0.25
    )
    assert r.trials.shape == (2,) and np.all(np.isfinite(r.trials)) and r.error_rate == 0.0
    assert np.all((r.data_quality >= 0) & (r.data_quality <= 1))


def test_dpa_nan_trials_are_reported():
    T, A, Ahat = compas([[3, 1], [1, 3]], [[1, 3], [3, 1]])
    with pytest.warns(RuntimeWarning, match="2 of 2 dpa trials undefined"):
        r = directional_predictability_amplification(
            A,
            T,
            direction="T->A",
            attribute_preds=Ahat,
            attacker=BAYES,
            quality=lambda y, p: 0.0,
            n_trials=2,
        )
    assert np.isnan(r.mean)


# ---------------------------------------------------------------- leakage


def test_leakage_exact_and_equalised():
    A = np.array([0, 0, 0, 1, 1, 1])
    T = np.array([0, 0, 1, 1, 1, 0])
    That = np.array([0, 0, 0, 1, 1, 1])
    # lambda_D: T=0 -> A=0 (2 of 3), T=1 -> A=1 (2 of 3) -> 4/6; lambda_M: That = A -> 1
    r = leakage_amplification(A, T, task_preds=That, attacker=BAYES, equalize=False, n_trials=1)
    assert r.value == pytest.approx(1 - 4 / 6, abs=1e-15) and r.direction is None
    r = leakage_amplification(A, T, task_preds=That, attacker=BAYES, n_trials=3, seed=0)
    assert r.error_rate == pytest.approx(2 / 6, abs=1e-15) and r.n_perturbed == 2
    assert np.all(r.model_quality == 1.0)


def test_matrix_inputs_are_categorical_rows():
    A = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    T = np.array([[1, 1], [1, 1], [0, 1], [0, 1]])
    r = directional_predictability_amplification(
        A, T, direction="T->A", attribute_preds=A, attacker=BAYES, equalize=False, n_trials=1
    )
    assert r.value == 0.0 and r.data_quality.tolist() == [1.0]


def test_errors():
    A, T = np.array([0, 1, 0, 1]), np.array([0, 1, 1, 1])
    with pytest.raises(BiasampError, match="attacker must have fit"):
        leakage_amplification(A, T, task_preds=T, attacker=object())
    with pytest.raises(
        BiasampError, match=r"quality must be one of \{'accuracy', 'f1'\}.*got 'auc'"
    ):
        leakage_amplification(A, T, task_preds=T, quality="auc")
    with pytest.raises(BiasampError, match="n_trials must be a positive integer; got 0"):
        directional_predictability_amplification(
            A, T, direction="T->A", attribute_preds=A, n_trials=0
        )
    with pytest.raises(BiasampError, match=r"test_fraction must be a number in \[0, 1\); got 1"):
        directional_predictability_amplification(
            A, T, direction="T->A", attribute_preds=A, test_fraction=1
        )
    with pytest.raises(BiasampError, match="attribute_preds is required"):
        directional_predictability_amplification(A, T, direction="T->A")
    with pytest.raises(BiasampError, match="task_preds is required"):
        directional_predictability_amplification(A, T, direction="A->T")
    with pytest.raises(BiasampError, match="direction must be one of"):
        directional_predictability_amplification(A, T, direction="both", attribute_preds=A)
    with pytest.raises(
        BiasampError, match=r"task_preds must have the shape of tasks \(4,\); got \(3,\)"
    ):
        leakage_amplification(A, T, task_preds=T[:3])
    with pytest.raises(BiasampError, match="same number of rows"):
        leakage_amplification(A[:3], T, task_preds=T)
    with pytest.raises(BiasampError, match="as matrices must be 0/1"):
        directional_predictability_amplification(
            A, np.array([[0.5], [1], [0], [1]]), direction="A->T", task_preds=np.ones((4, 1))
        )
