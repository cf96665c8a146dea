"""BiasAmp-> (tables and labels): golden values, naive-loop comparisons, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.metrics import (
    DirectionalResult,
    directional_bias_amplification,
    directional_bias_amplification_labels,
)

B_GOLD = np.array([[30, 10], [10, 30], [20, 20], [5, 15]], dtype=float)
M_AT = np.array([[0.5, 0.2], [0.1, 0.4], [0.3, 0.3], [0.1, 0.1]])
M_TA = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]])


# ---------------------------------------------------------------- helpers


def rows(groups):
    """Build (attributes, tasks, task_preds) from [(n_attr, n_groups, attr_index, task, pred), ...]."""
    A, T, P = [], [], []
    for n, k, a, t, p in groups:
        onehot = [0] * k
        onehot[a] = 1
        A += [onehot] * n
        T += [[t]] * n
        P += [[p]] * n
    return np.array(A), np.array(T), np.array(P)


def naive_labels(A, T, Ap, Tp, direction, Atr=None, Ttr=None):
    """Per-cell loops straight from Eq. 2 of the paper (and the §1 rules)."""
    Atr = A if Atr is None else Atr
    Ttr = T if Ttr is None else Ttr
    keep = [i for i in range(len(Atr)) if any(Atr[i]) or any(Ttr[i])]
    n = len(keep)
    nt, na = T.shape[1], A.shape[1]
    out = np.full((nt, na), np.nan)
    for t in range(nt):
        for a in range(na):
            pat = sum(Atr[i][a] * Ttr[i][t] for i in keep) / n
            pa = sum(Atr[i][a] for i in keep) / n
            pt = sum(Ttr[i][t] for i in keep) / n
            d = pat - pa * pt
            y = 0 if abs(d) <= 1e-12 else (1 if d > 0 else -1)
            if direction == "attribute_to_task":
                idx = [i for i in range(len(A)) if A[i][a] == 1]
                if not idx:
                    continue
                delta = np.mean([Tp[i][t] for i in idx]) - np.mean([T[i][t] for i in idx])
            else:
                idx = [i for i in range(len(T)) if T[i][t] == 1]
                if not idx:
                    continue
                delta = np.mean([Ap[i][a] for i in idx]) - np.mean([A[i][a] for i in idx])
            out[t, a] = y * delta
    return out


def naive_table(M, B, direction, Btr=None):
    """Per-cell loops of the published utils.py semantics (indicator from Btr or B)."""
    Btr = B if Btr is None else Btr
    nt, na = B.shape
    total = sum(Btr[i][j] for i in range(nt) for j in range(na))
    out = np.zeros((nt, na))
    for i in range(nt):
        for j in range(na):
            col = sum(Btr[k][j] for k in range(nt))
            row = sum(Btr[i][k] for k in range(na))
            ind = Btr[i][j] / col - row / total
            y = 0 if abs(ind) <= 1e-12 else (1 if ind > 0 else -1)
            if direction == "attribute_to_task":
                pb = B[i][j] / sum(B[k][j] for k in range(nt))
                pm = M[i][j] / sum(M[k][j] for k in range(nt))
            else:
                pb = B[i][j] / sum(B[i][k] for k in range(na))
                pm = M[i][j] / sum(M[i][k] for k in range(na))
            out[i, j] = y * (pm - pb)
    return out


# ---------------------------------------------------------------- golden values


def test_golden_table_attribute_to_task():
    r = directional_bias_amplification(M_AT, B_GOLD, direction="attribute_to_task")
    # column sums 65, 75; P(T)=[40,40,40,20]/140. Cell (0,0): y=+1 (30/65 > 40/140),
    # delta = .5 - 30/65 = .038462; cell (0,1): y=-1 (10/75 < 40/140), delta = .2 - 10/75 = .066667
    expected = np.array(
        [[0.038462, -0.066667], [0.053846, 0], [-0.007692, -0.033333], [-0.023077, -0.1]]
    )
    np.testing.assert_allclose(
        r.by_pair["contribution"].to_numpy().reshape(4, 2), expected, atol=5e-7
    )
    assert r.value == pytest.approx(-0.017308, abs=5e-7)  # sum(expected) / 8 = -.138462 / 8
    assert isinstance(r, DirectionalResult)
    assert (r.direction, r.n_cells, r.n_ties, r.n_nan) == ("attribute_to_task", 8, 0, 0)
    assert list(r.by_pair.columns) == [
        "task",
        "attribute",
        "association",
        "p_base",
        "p_model",
        "delta",
        "contribution",
    ]
    assert r.by_pair["association"].tolist() == [1, -1, -1, 1, 1, -1, -1, 1]


def test_golden_table_task_to_attribute():
    r = directional_bias_amplification(M_TA, B_GOLD, direction="T->A")
    # P(A|T) rows: [.75,.25], [.25,.75], [.5,.5], [.25,.75]; deltas [.05,-.05], [.05,-.05], [0,0], [-.05,.05]
    expected = np.array([[0.05, 0.05], [-0.05, -0.05], [0, 0], [0.05, 0.05]])
    np.testing.assert_allclose(
        r.by_pair["contribution"].to_numpy().reshape(4, 2), expected, atol=1e-15
    )
    assert r.value == pytest.approx(0.0125, abs=1e-15)  # (.05*2 - .05*2 + .05*2) / 8
    assert r.direction == "task_to_attribute"


def _sec32_example1():
    # A1: 10 neg / 40 pos, predicted correctly; A2: 40 / 10, always predicts 0; A3: 10 / 20, always 1
    return rows(
        [
            (10, 3, 0, 0, 0),
            (40, 3, 0, 1, 1),
            (40, 3, 1, 0, 0),
            (10, 3, 1, 1, 0),
            (10, 3, 2, 0, 1),
            (20, 3, 2, 1, 1),
        ]
    )


def test_sec32_example1_labels():
    A, T, P = _sec32_example1()
    r = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=P)
    # P(T)=70/130; y = [+1, -1, +1]; deltas [0, 0-.2, 1-20/30] -> contributions [0, .2, 1/3]; mean = .177778
    assert r.value == pytest.approx((0 + 0.2 + 1 / 3) / 3, abs=1e-15)
    assert round(r.value, 4) == 0.1778
    r2 = directional_bias_amplification_labels(A, T, direction="T->A", attribute_preds=A)
    assert r2.value == 0.0  # attributes predicted perfectly


def test_sec32_example2_labels():
    # A1: 60 neg / 30 pos, always predicts 0; A2: 10 / 20, always predicts 1
    A, T, P = rows([(60, 2, 0, 0, 0), (30, 2, 0, 1, 0), (10, 2, 1, 0, 1), (20, 2, 1, 1, 1)])
    r = directional_bias_amplification_labels(A, T, direction="attribute_to_task", task_preds=P)
    # P(T)=50/120; y=[-1,+1]; deltas [0-1/3, 1-2/3] -> contributions [1/3, 1/3]
    assert r.value == pytest.approx(1 / 3, abs=1e-15)
    assert round(r.value, 4) == 0.3333
    assert (
        directional_bias_amplification_labels(A, T, direction="T->A", attribute_preds=A).value
        == 0.0
    )


def _compas(tab_true, tab_pred):
    """Rows reproducing a 2x2 count table of (row variable, column variable) and its prediction."""
    r, c, cp = [], [], []
    for i in range(2):
        for j in range(2):
            r += [i] * tab_true[i][j]
            c += [j] * tab_true[i][j]
        # predictions: the same rows of row-value i, columns re-assigned by the predicted counts
        cp += [0] * tab_pred[i][0] + [1] * tab_pred[i][1]
    eye = np.eye(2, dtype=int)
    return eye[r], eye[c], eye[cp]


def test_dpa_paper_compas_unbalanced_biasamp():
    # DPA paper Table 2a; Table 3 reports BA-> T->A -0.078, A->T -0.038
    # T->A: Δ(T0)=∓173/2631, Δ(T1)=±241/2647, all four contributions negative:
    #   -(2*173/2631 + 2*241/2647)/4 = -0.078400
    T, A, Ahat = _compas([[1229, 1402], [874, 1773]], [[1056, 1575], [1115, 1532]])
    r = directional_bias_amplification_labels(A, T, direction="T->A", attribute_preds=Ahat)
    assert r.value == pytest.approx(-(2 * 173 / 2631 + 2 * 241 / 2647) / 4, abs=1e-15)
    assert round(r.value, 3) == -0.078
    # A->T: rows A=0: T 1229/874, T̂ 1165/938 (Δ ∓64/2103); A=1: T 1402/1773, T̂ 1546/1629 (Δ ±144/3175)
    A2, T2, That = _compas([[1229, 874], [1402, 1773]], [[1165, 938], [1546, 1629]])
    r = directional_bias_amplification_labels(A2, T2, direction="A->T", task_preds=That)
    assert r.value == pytest.approx(-(2 * 64 / 2103 + 2 * 144 / 3175) / 4, abs=1e-15)
    assert round(r.value, 3) == -0.038
    # table form on the same counts (tasks x attributes), model as conditionals
    base = np.array([[1229, 1402], [874, 1773]], dtype=float)
    m_ta = np.array([[1056, 1575], [1115, 1532]]) / np.array([[2631], [2647]])
    assert directional_bias_amplification(m_ta, base, direction="T->A").value == pytest.approx(
        -(2 * 173 / 2631 + 2 * 241 / 2647) / 4, abs=1e-15
    )
    m_at = np.array([[1165, 1546], [938, 1629]]) / np.array([[2103, 3175]])
    assert directional_bias_amplification(m_at, base, direction="A->T").value == pytest.approx(
        -(2 * 64 / 2103 + 2 * 144 / 3175) / 4, abs=1e-15
    )


def test_dpa_paper_compas_balanced_is_all_ties():
    # Table 2b: 874 in every cell -> every indicator ties -> BA-> = 0 (Table 3: 0.000)
    T, A, Ahat = _compas([[874, 874], [874, 874]], [[1083, 665], [896, 852]])
    r = directional_bias_amplification_labels(A, T, direction="T->A", attribute_preds=Ahat)
    assert (r.value, r.n_ties, r.n_cells) == (0.0, 4, 4)


# ---------------------------------------------------------------- paper quirks (compat)


def _utils_loop(M, B, direction):
    """The published utils.py operation order, written out with loops (no tie tolerance)."""
    num_attr = np.sum(B, axis=0)
    p_t_a = B / np.expand_dims(num_attr, 0)
    p_t = np.sum(B, axis=1) / np.sum(num_attr)
    if direction == "task_to_attribute":
        data = B / np.sum(B, axis=1, keepdims=True)
        pred = M / np.sum(M, axis=1, keepdims=True)
    else:
        data = B / np.expand_dims(num_attr, 0)
        pred = M / np.expand_dims(num_attr, 0)
    diff = np.zeros_like(data)
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            diff[i][j] = pred[i][j] - data[i][j]
            s = np.sign(p_t_a[i][j] - p_t[i])
            if s == 0:
                diff[i][j] = 0
            elif s == -1:
                diff[i][j] = -diff[i][j]
    return diff, np.nanmean(diff)


@pytest.mark.parametrize("direction", ["attribute_to_task", "task_to_attribute"])
def test_bit_exact_with_published_order(direction):
    rng = np.random.default_rng(7)
    for _ in range(20):
        nt, na = rng.integers(1, 41), rng.integers(2, 6)
        B = rng.random((nt, na))
        B = B / B.sum(axis=0, keepdims=True) if direction == "attribute_to_task" else B
        M = rng.random((nt, na))
        M = M / M.sum(axis=0 if direction == "attribute_to_task" else 1, keepdims=True)
        diff, value = _utils_loop(M, B, direction)
        r = directional_bias_amplification(M, B, direction=direction, tie_tol=0.0)
        assert r.value == value  # bit for bit
        np.testing.assert_array_equal(r.by_pair["contribution"].to_numpy().reshape(nt, na), diff)
        if direction == "task_to_attribute" and nt > 1:  # an occupation absent from the base
            B[rng.integers(0, nt)] = 0.0
            with np.errstate(invalid="ignore"):
                diff, value = _utils_loop(M, B, direction)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = directional_bias_amplification(
                    M, B, direction=direction, tie_tol=0.0, undefined="tie"
                )
            assert r.value == value
            np.testing.assert_array_equal(
                r.by_pair["contribution"].to_numpy().reshape(nt, na), diff
            )


def _uniform3(direction):
    eps = 1e-7
    male = np.r_[np.ones(16), np.zeros(16)].astype(bool)
    u = 1.0 / 2 * 16 if direction == "attribute_to_task" else 1.0 / 3  # the paper's precedence slip
    B = np.empty((32, 3))
    B[:, 0] = np.where(male, u + eps, u - eps)
    B[:, 1] = np.where(male, u - eps, u + eps)
    B[:, 2] = u - eps
    if direction == "attribute_to_task":
        B = B / B.sum(axis=0, keepdims=True)
    return B


def test_uniform3_they_quirk_reproduced_only_with_tie_tol_zero():
    B = _uniform3("attribute_to_task")
    M = np.full((32, 3), 1 / 32)
    they = directional_bias_amplification(M, B, tie_tol=0.0).by_pair.query("attribute == 2")
    assert they["association"].tolist() == [-1] * 32  # floating-point noise, as published
    r = directional_bias_amplification(M, B)  # default tie_tol=1e-12
    assert r.by_pair.query("attribute == 2")["association"].tolist() == [0] * 32
    assert r.n_ties == 32
    Bt = _uniform3("task_to_attribute")
    they_t = directional_bias_amplification(
        np.full((32, 3), 1 / 3), Bt, direction="T->A", tie_tol=0.0
    )
    assert they_t.by_pair.query("attribute == 2")["association"].tolist() == [0] * 32


# ---------------------------------------------------------------- naive-loop comparisons


@pytest.mark.parametrize("direction", ["attribute_to_task", "task_to_attribute"])
@pytest.mark.parametrize("soft", [False, True])
def test_labels_match_naive_loop(direction, soft):
    rng = np.random.default_rng(11)
    for _ in range(6):
        n, na, nt = int(rng.integers(20, 80)), int(rng.integers(2, 6)), int(rng.integers(1, 41))
        A = (rng.random((n, na)) < 0.4).astype(int)
        T = (rng.random((n, nt)) < 0.3).astype(int)
        Ap = rng.random((n, na)) if soft else (rng.random((n, na)) < 0.4).astype(int)
        Tp = rng.random((n, nt)) if soft else (rng.random((n, nt)) < 0.3).astype(int)
        expected = naive_labels(A, T, Ap, Tp, direction)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = directional_bias_amplification_labels(
                A, T, direction=direction, attribute_preds=Ap, task_preds=Tp
            )
        got = r.by_pair["contribution"].to_numpy().reshape(nt, na)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert r.n_nan == int(np.isnan(expected).sum())
        assert r.value == pytest.approx(np.nanmean(expected), abs=1e-12)


def test_labels_with_train_matrices_match_naive_loop():
    rng = np.random.default_rng(3)
    n, na, nt = 60, 3, 7
    A, T = (rng.random((n, na)) < 0.4).astype(int), (rng.random((n, nt)) < 0.3).astype(int)
    Atr, Ttr = (rng.random((90, na)) < 0.4).astype(int), (rng.random((90, nt)) < 0.3).astype(int)
    Tp = rng.random((n, nt))
    expected = naive_labels(A, T, None, Tp, "attribute_to_task", Atr, Ttr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = directional_bias_amplification_labels(
            A, T, direction="A->T", task_preds=Tp, attributes_train=Atr, tasks_train=Ttr
        )
    np.testing.assert_allclose(
        r.by_pair["contribution"].to_numpy().reshape(nt, na), expected, atol=1e-12
    )


def test_train_rows_without_labels_are_filtered():
    # 2 rows with neither label must not change P(A), P(T): add 1000 empty rows -> same indicator
    A, T, P = _sec32_example1()
    empty = np.zeros((1000, 3), int), np.zeros((1000, 1), int)
    r1 = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=P)
    r2 = directional_bias_amplification_labels(
        A,
        T,
        direction="A->T",
        task_preds=P,
        attributes_train=np.vstack([A, empty[0]]),
        tasks_train=np.vstack([T, empty[1]]),
    )
    assert r1.by_pair["association"].tolist() == r2.by_pair["association"].tolist() == [1, -1, 1]


@pytest.mark.parametrize("direction", ["attribute_to_task", "task_to_attribute"])
def test_tables_match_naive_loop(direction):
    rng = np.random.default_rng(5)
    for _ in range(10):
        nt, na = int(rng.integers(1, 41)), int(rng.integers(2, 6))
        B = rng.integers(0, 50, size=(nt, na)).astype(float) + 1
        Btr = rng.integers(0, 50, size=(nt, na)).astype(float) + 1
        M = rng.random((nt, na))
        M = M / M.sum(axis=0 if direction == "attribute_to_task" else 1, keepdims=True)
        for train in (None, Btr):
            r = directional_bias_amplification(M, B, direction=direction, base_train=train)
            expected = naive_table(M, B, direction, train)
            np.testing.assert_allclose(
                r.by_pair["contribution"].to_numpy().reshape(nt, na), expected, atol=1e-12
            )
            assert r.value == pytest.approx(expected.mean(), abs=1e-12)


# ---------------------------------------------------------------- options


def test_association_override_and_dataframe_alignment():
    tasks, attrs = ["nurse", "cook", "pilot", "judge"], ["he", "she"]
    base = pd.DataFrame(B_GOLD, index=tasks, columns=attrs)
    model = pd.DataFrame(M_TA, index=tasks, columns=attrs).iloc[::-1, ::-1]  # shuffled labels
    r = directional_bias_amplification(model, base, direction="T->A")
    assert r.value == pytest.approx(0.0125, abs=1e-15)
    assert r.by_pair["task"].tolist() == [t for t in tasks for _ in attrs]
    assoc = pd.DataFrame([[1, -1]] * 4, index=tasks, columns=attrs)
    r2 = directional_bias_amplification(model, base, direction="T->A", association=assoc)
    # deltas [.05,-.05],[.05,-.05],[0,0],[-.05,.05] with signs [1,-1] -> [.05,.05,.05,.05,0,0,-.05,-.05]
    assert r2.value == pytest.approx(0.0125 * 0 + (0.05 * 4 - 0.05 * 2) / 8, abs=1e-15)
    assert r2.by_pair["association"].tolist() == [1, -1] * 4


def test_nan_cells_are_counted_and_warned():
    A = np.array([[1, 0], [1, 0], [1, 0]])  # attribute 1 never occurs -> its A->T cells undefined
    T = np.array([[1], [0], [1]])
    P = np.array([[1.0], [1.0], [1.0]])
    with pytest.warns(RuntimeWarning, match="1 of 2 .* cells undefined"):
        r = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=P)
    assert (r.n_nan, r.n_cells) == (1, 1)
    assert np.isnan(r.by_pair["delta"].iloc[1])
    # attribute 0 vs task: P(A0,T)=2/3 = P(A0)P(T)=1*2/3 -> tie -> contributes 0 but is counted
    assert (r.value, r.n_ties) == (0.0, 1)


def test_all_cells_nan_gives_nan_with_warning():
    # the only attribute never occurs in the evaluation rows -> every A->T cell is undefined
    A, T, P = np.array([[0], [0]]), np.array([[1], [0]]), np.array([[1.0], [0.0]])
    with pytest.warns(RuntimeWarning, match="1 of 1 .* cells undefined"):
        r = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=P)
    assert np.isnan(r.value) and (r.n_nan, r.n_cells) == (1, 0)
    # a zero column in the base table: that column's A->T cells are undefined
    with pytest.warns(RuntimeWarning, match="1 of 2 .* cells undefined"):
        r = directional_bias_amplification(
            np.array([[1.0, 1.0]]), np.array([[1.0, 0.0]]), direction="A->T"
        )
    assert (r.n_nan, r.n_cells, r.value) == (1, 1, 0.0)


# ---------------------------------------------------------------- errors


def test_error_unknown_direction():
    with pytest.raises(BiasampError, match=r"direction must be one of .*got 'T>A'"):
        directional_bias_amplification(M_AT, B_GOLD, direction="T>A")
    with pytest.raises(BiasampError, match="direction must be one of"):
        directional_bias_amplification_labels([[1]], [[1]], direction="up", task_preds=[[1]])


def test_error_wrong_shapes():
    with pytest.raises(
        BiasampError, match=r"model must have the shape of base \(4, 2\); got \(2, 2\)"
    ):
        directional_bias_amplification(M_AT[:2], B_GOLD)
    with pytest.raises(BiasampError, match="base must be 2-D"):
        directional_bias_amplification(M_AT, [1, 2, 3])
    with pytest.raises(BiasampError, match="same number of rows"):
        directional_bias_amplification_labels(
            [[1, 0]], [[1], [0]], direction="A->T", task_preds=[[1]]
        )
    with pytest.raises(BiasampError, match=r"task_preds must have the shape of tasks"):
        directional_bias_amplification_labels(
            [[1, 0]], [[1]], direction="A->T", task_preds=[[1, 0]]
        )


def test_error_negative_and_nonfinite():
    with pytest.raises(BiasampError, match=r"base must be non-negative.*got minimum -10\.0"):
        directional_bias_amplification(M_AT, B_GOLD * np.array([[1, -1], [1, 1], [1, 1], [1, 1]]))
    with pytest.raises(BiasampError, match="base must be finite"):
        directional_bias_amplification(M_AT, np.where(B_GOLD == 5, np.nan, B_GOLD))
    with pytest.raises(BiasampError, match="model must be non-negative"):
        directional_bias_amplification(
            M_TA - np.array([[0.9, -0.9], [0, 0], [0, 0], [0, 0]]), B_GOLD, direction="T->A"
        )
    with pytest.raises(BiasampError, match="base must not be all zero"):
        directional_bias_amplification(M_AT, np.zeros((4, 2)))


def test_error_model_not_normalised():
    with pytest.raises(
        BiasampError,
        match=r"model columns .* must each sum to 1.*index 0 sums to 1\.0"
        r"|model columns .* must each sum to 1",
    ):
        directional_bias_amplification(M_TA, B_GOLD, direction="A->T")
    with pytest.raises(BiasampError, match=r"model rows .* must each sum to 1"):
        directional_bias_amplification(M_AT, B_GOLD, direction="T->A")


def test_error_train_and_association():
    with pytest.raises(BiasampError, match="at most one of base_train and association"):
        directional_bias_amplification(M_AT, B_GOLD, base_train=B_GOLD, association=np.ones((4, 2)))
    with pytest.raises(BiasampError, match=r"association values must be -1, 0 or 1; got \[2\.0\]"):
        directional_bias_amplification(M_AT, B_GOLD, association=np.full((4, 2), 2))
    A, T, P = _sec32_example1()
    with pytest.raises(
        BiasampError,
        match="give both attributes_train and tasks_train or neither; got only attributes_train",
    ):
        directional_bias_amplification_labels(
            A, T, direction="A->T", task_preds=P, attributes_train=A
        )
    with pytest.raises(BiasampError, match="got only tasks_train"):
        directional_bias_amplification_labels(A, T, direction="A->T", task_preds=P, tasks_train=T)
    with pytest.raises(BiasampError, match="no row with a task or an attribute"):
        directional_bias_amplification_labels(
            A,
            T,
            direction="A->T",
            task_preds=P,
            attributes_train=np.zeros((2, 3)),
            tasks_train=np.zeros((2, 1)),
        )


def test_error_label_mismatch():
    tasks, attrs = ["nurse", "cook", "pilot", "judge"], ["he", "she"]
    base = pd.DataFrame(B_GOLD, index=tasks, columns=attrs)
    model = pd.DataFrame(M_TA, index=tasks, columns=["he", "they"])
    with pytest.raises(
        BiasampError,
        match=r"model attributes \(columns\) do not match base: "
        r"missing \['she'\], extra \['they'\]",
    ):
        directional_bias_amplification(model, base, direction="T->A")
    model2 = pd.DataFrame(M_TA, index=["nurse", "cook", "pilot", "baker"], columns=attrs)
    with pytest.raises(BiasampError, match=r"model tasks \(index\) do not match base"):
        directional_bias_amplification(model2, base, direction="T->A")
    A = pd.DataFrame([[1, 0], [0, 1]], columns=["he", "she"])
    T = pd.DataFrame([[1], [0]], columns=["nurse"])
    Ap = pd.DataFrame([[1, 0], [0, 1]], columns=["she", "he"])
    with pytest.raises(BiasampError, match="attribute_preds columns do not match attributes"):
        directional_bias_amplification_labels(A, T, direction="T->A", attribute_preds=Ap)


def test_error_bad_labels_and_missing_preds():
    with pytest.raises(BiasampError, match=r"attributes must be 0/1; got values \[2\]"):
        directional_bias_amplification_labels([[2, 0]], [[1]], direction="A->T", task_preds=[[1]])
    with pytest.raises(BiasampError, match=r"tasks must be 0/1 labels; got values \[0\.5\]"):
        directional_bias_amplification_labels([[1, 0]], [[0.5]], direction="A->T", task_preds=[[1]])
    with pytest.raises(
        BiasampError, match=r"task_preds must hold probabilities in \[0, 1\]; got values \[1\.5\]"
    ):
        directional_bias_amplification_labels([[1, 0]], [[1]], direction="A->T", task_preds=[[1.5]])
    with pytest.raises(
        BiasampError, match="task_preds is required for direction 'attribute_to_task'"
    ):
        directional_bias_amplification_labels([[1, 0]], [[1]], direction="A->T")
    with pytest.raises(
        BiasampError, match="attribute_preds is required for direction 'task_to_attribute'"
    ):
        directional_bias_amplification_labels([[1, 0]], [[1]], direction="T->A")
    with pytest.raises(BiasampError, match="tie_tol must be a non-negative number; got -1"):
        directional_bias_amplification(M_AT, B_GOLD, tie_tol=-1)


def test_tie_tol_none_is_default():
    B = _uniform3("attribute_to_task")
    M = np.full((32, 3), 1 / 32)
    assert directional_bias_amplification(M, B, tie_tol=None).n_ties == 32
    with pytest.raises(BiasampError, match="tie_tol must be a non-negative number; got 'x'"):
        directional_bias_amplification(M, B, tie_tol="x")


def test_dpa_paper_hiring_example_is_a_bias_for_biasamp():
    # DPA paper Sec. 7: 100 men (A0), 50 women (A1); 25 + 25 hired (T0), the rest rejected (T1).
    # P(T0|women) = 25/50 = .5 > P(T0) = 50/150 -> +1; P(T0|men) = .25 < 1/3 -> -1 (BA-> sees a bias)
    base = np.array([[25, 25], [75, 25]], dtype=float)
    r = directional_bias_amplification(base / base.sum(axis=0), base, direction="A->T")
    assert r.by_pair["association"].tolist() == [-1, 1, 1, -1]
    assert r.value == 0.0 and r.n_ties == 0  # model = data conditional


def test_dataframe_and_fortran_input_keep_the_published_arithmetic():
    # DataFrame.to_numpy() is Fortran-ordered; sums must still be taken as on a C-ordered array
    B = _uniform3("attribute_to_task")
    M = np.full((32, 3), 1 / 32)
    ref = directional_bias_amplification(M, B, tie_tol=0.0)
    names = [f"occ{i}" for i in range(32)]
    for base in (pd.DataFrame(B, index=names, columns=["he", "she", "they"]), np.asfortranarray(B)):
        model = (
            pd.DataFrame(M, index=names, columns=["he", "she", "they"])
            if isinstance(base, pd.DataFrame)
            else M
        )
        r = directional_bias_amplification(model, base, tie_tol=0.0)
        # exact: every input is made a C-contiguous float64 array first (metrics/_common.py),
        # so the arithmetic is the same operation for operation
        assert r.value == ref.value
        assert r.by_pair["association"].tolist() == ref.by_pair["association"].tolist()


def test_zero_base_row_skip_or_tie_as_published():
    # T->A with an occupation never seen in the base (row [0, 0]): P(A|T) is 0/0.
    B = np.array([[30, 10], [0, 0], [10, 30]], dtype=float)
    M = np.array([[0.8, 0.2], [0.6, 0.4], [0.2, 0.8]])
    # defined cells: row 0 y=[+1,-1], delta [.05, -.05] -> .05, .05; row 2 y=[-1,+1], delta [-.05, .05] -> .05, .05
    with pytest.warns(RuntimeWarning, match="2 of 6 .* cells undefined"):
        r = directional_bias_amplification(M, B, direction="T->A")
    assert r.value == pytest.approx(0.05, abs=1e-15) and (r.n_nan, r.n_cells) == (2, 4)
    # published code: the empty row ties (0/colsum - 0/total = 0) and counts as two zeros: .2 / 6
    rt = directional_bias_amplification(M, B, direction="T->A", undefined="tie", tie_tol=0.0)
    assert rt.value == pytest.approx(0.2 / 6, abs=1e-15) and (rt.n_nan, rt.n_cells, rt.n_ties) == (
        0,
        6,
        2,
    )
    with np.errstate(invalid="ignore"):
        _, value = _utils_loop(M, B, "task_to_attribute")
    assert rt.value == value
    with pytest.raises(BiasampError, match=r"undefined must be one of 'skip', 'tie'; got 'zero'"):
        directional_bias_amplification(M, B, direction="T->A", undefined="zero")


def test_zero_base_column_stays_undefined_even_as_published():
    # A->T with an attribute never seen in the base: sign and P(T|A) undefined -> NaN in both modes
    B = np.array([[30, 0], [10, 0]], dtype=float)
    M = np.array([[0.7, 0.5], [0.3, 0.5]])
    for mode in ("skip", "tie"):
        with pytest.warns(RuntimeWarning, match="2 of 4"):
            r = directional_bias_amplification(M, B, direction="A->T", undefined=mode, tie_tol=0.0)
        # column 0: P(T) = [.75, .25] = P(T|A0) -> ties -> 0, 0
        assert (r.value, r.n_nan, r.n_cells) == (0.0, 2, 2)


# ---------------------------------------------------------------- the paper's text conventions
def test_ties_as_in_the_papers_text_count_minus_delta():
    # 3 attributes; P(T0) = 30/90 = P(T0 | a0) and P(T1) = 60/90 = P(T1 | a0): a0 ties in both
    B = np.array([[10, 10, 10], [20, 10, 30]], dtype=float)
    M = np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]])
    # p_base rows [1/3, 1/3, 1/3], [1/3, 1/6, 1/2]; delta [[1/6, -1/30, -2/15], [-2/15, 1/30, 1/10]]
    # signs [[0, +1, -1], [0, -1, +1]]; code: (0 - 1/30 + 2/15 + 0 - 1/30 + 1/10) / 6 = 1/36
    r = directional_bias_amplification(M, B, direction="T->A")
    assert r.value == pytest.approx(1 / 36, abs=1e-15) and r.n_ties == 2
    # text: ties contribute -delta: + (-1/6) + (2/15) -> (1/6 - 1/6 + 2/15) / 6 = 1/45
    t = directional_bias_amplification(M, B, direction="T->A", ties="negative")
    assert t.value == pytest.approx(1 / 45, abs=1e-15) and t.n_ties == 2
    # only tie cells change
    diff = (t.by_pair["contribution"] - r.by_pair["contribution"]).to_numpy()
    assert np.allclose(diff, [-1 / 6, 0, 0, 2 / 15, 0, 0], atol=1e-15)
    with pytest.raises(BiasampError, match=r"ties must be one of 'zero', 'negative'; got 'x'"):
        directional_bias_amplification(M, B, direction="T->A", ties="x")


def test_empty_rows_as_in_the_papers_text_can_flip_the_sign():
    # 10 rows a0 & T, 10 rows a1 & not T, 10 rows a1 & T, 30 rows with no label at all
    A = [[1, 0]] * 10 + [[0, 1]] * 20 + [[0, 0]] * 30
    T = [[1]] * 10 + [[0]] * 10 + [[1]] * 10 + [[0]] * 30
    That = [[1]] * 10 + [[1]] * 20 + [[0]] * 30  # a1 rows always predicted T
    # code (labelled rows, n=30): a1: 10/30 < (20/30)(20/30) -> -1; text (all 60 rows):
    # 10/60 > (20/60)(20/60) -> +1. Delta: a0 0, a1 1 - 1/2 = 1/2.
    drop = directional_bias_amplification_labels(A, T, direction="A->T", task_preds=That)
    keep = directional_bias_amplification_labels(
        A, T, direction="A->T", task_preds=That, empty_rows="keep"
    )
    assert drop.by_pair["association"].tolist() == [1, -1]
    assert keep.by_pair["association"].tolist() == [1, 1]
    assert (drop.value, keep.value) == (
        pytest.approx(-0.25, abs=1e-15),
        pytest.approx(0.25, abs=1e-15),
    )
    # with every row labelled the two conventions agree
    a = directional_bias_amplification_labels(
        A[:30], T[:30], direction="A->T", task_preds=That[:30]
    )
    b = directional_bias_amplification_labels(
        A[:30], T[:30], direction="A->T", task_preds=That[:30], empty_rows="keep"
    )
    assert a.value == b.value
    with pytest.raises(BiasampError, match=r"empty_rows must be one of 'drop', 'keep'"):
        directional_bias_amplification_labels(
            A, T, direction="A->T", task_preds=That, empty_rows="all"
        )


def test_table_core_vectorised_equals_one_table_at_a_time():
    from biasamp.metrics._directional import table_core

    rng = np.random.default_rng(11)
    for direction in ("attribute_to_task", "task_to_attribute"):
        B = rng.integers(0, 6, size=(9, 5, 3)).astype(float)
        B[:, 1] = 0.0  # a zero row in every table: undefined cells
        M = rng.random((9, 5, 3))
        M /= M.sum(axis=-2 if direction == "attribute_to_task" else -1, keepdims=True)
        for undefined in ("skip", "tie"):
            for ties in ("zero", "negative"):
                batch = table_core(
                    M, B, direction=direction, tie_tol=0.0, undefined=undefined, ties=ties
                )
                for i in range(9):
                    one = table_core(
                        M[i], B[i], direction=direction, tie_tol=0.0, undefined=undefined, ties=ties
                    )
                    for key in ("y", "p_base", "p_model", "delta", "contribution"):
                        np.testing.assert_array_equal(batch[key][i], one[key])
                    assert batch["value"][i] == pytest.approx(one["value"], abs=1e-15)
