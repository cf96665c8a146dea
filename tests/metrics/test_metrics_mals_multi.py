"""BiasAmp_MALS and Multi->: worked examples, naive loops, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from biasamp import BiasampError
from biasamp.metrics import (
    mals_bias_amplification,
    mals_bias_amplification_labels,
    multi_attribute_bias_amplification,
)


def groups(spec, k):
    """spec: [(n, attribute index, task, task_pred)] -> one-hot attributes, tasks, task preds."""
    A, T, P = [], [], []
    for n, a, t, p in spec:
        A += [list(np.eye(k, dtype=int)[a])] * n
        T += [[t]] * n
        P += [[p]] * n
    return np.array(A), np.array(T), np.array(P)


# ---------------------------------------------------------------- MALS worked numbers (Sec. 3.2)


def test_mals_two_group_example1_models():
    # data: A1 10 neg / 40 pos, A2 40 / 10.  P(A1|T=1) = 40/50 = .8 > 1/2 -> only A1 selected
    # model 1: correct on A1, T̂=0 on A2 -> P(Â1|T̂=1) = 40/40 -> delta = 1 - .8 = .2
    A, T, P = groups([(10, 0, 0, 0), (40, 0, 1, 1), (40, 1, 0, 0), (10, 1, 1, 0)], 2)
    r = mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P)
    assert r.value == pytest.approx(0.2, abs=1e-15)
    assert r.by_pair["association"].tolist() == [1, 0] and r.n_cells == 1
    # model 2: correct on A2, T̂=1 on all of A1 -> P(Â1|T̂=1) = 50/60 -> delta = 5/6 - .8 = .0333
    A, T, P = groups([(10, 0, 0, 1), (40, 0, 1, 1), (40, 1, 0, 0), (10, 1, 1, 1)], 2)
    r = mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P)
    assert r.value == pytest.approx(50 / 60 - 0.8, abs=1e-15)
    assert round(r.value, 3) == 0.033


def test_mals_example2_negative():
    # A1 60/30, A2 10/20; P(A1|T=1) = 30/50 = .6 > .5 selects A1; model T̂=0 on A1, 1 on A2
    # P(Â1|T̂=1) = 0/20 -> delta = 0 - .6 = -.6
    A, T, P = groups([(60, 0, 0, 0), (30, 0, 1, 0), (10, 1, 0, 1), (20, 1, 1, 1)], 2)
    r = mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P)
    assert r.value == pytest.approx(-0.6, abs=1e-15)
    # the same numbers in table form: data counts [[30, 20]], prediction counts [[0, 20]]
    assert mals_bias_amplification([[0, 20]], [[30, 20]]).value == pytest.approx(-0.6, abs=1e-15)


def test_mals_three_groups_example1_is_zero():
    # Sec. 3.2 shortcoming 1: y = [1, 0, 0]; A1 predicted correctly -> 0 although A2, A3 amplify
    A, T, P = groups(
        [(10, 0, 0, 0), (40, 0, 1, 1), (40, 1, 0, 0), (10, 1, 1, 0), (10, 2, 0, 1), (20, 2, 1, 1)],
        3,
    )
    r = mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P)
    # P(Â1|T̂=1) = 40/70 vs P(A1|T=1) = 40/70 -> 0
    assert r.value == pytest.approx(0.0, abs=1e-15)


def naive_mals(A, T, Ap, Tp):
    nt, na = T.shape[1], A.shape[1]
    total = 0.0
    for t in range(nt):
        for a in range(na):
            tr = [i for i in range(len(T)) if T[i][t] == 1]
            pb = sum(A[i][a] for i in tr) / len(tr) if tr else np.nan
            if not pb > 1 / na:
                continue
            w = sum(Tp[i][t] for i in range(len(Tp)))
            pm = sum(Tp[i][t] * Ap[i][a] for i in range(len(Tp))) / w if w else np.nan
            if not np.isnan(pm - pb):
                total += pm - pb
    return total / nt


@pytest.mark.parametrize("soft", [False, True])
def test_mals_labels_and_tables_match_naive_loop(soft):
    rng = np.random.default_rng(21)
    for _ in range(8):
        n, na, nt = int(rng.integers(30, 90)), int(rng.integers(2, 6)), int(rng.integers(1, 41))
        A = (rng.random((n, na)) < 0.4).astype(int)
        T = (rng.random((n, nt)) < 0.3).astype(int)
        Ap = rng.random((n, na)) if soft else (rng.random((n, na)) < 0.4).astype(int)
        Tp = rng.random((n, nt)) if soft else (rng.random((n, nt)) < 0.3).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = mals_bias_amplification_labels(A, T, attribute_preds=Ap, task_preds=Tp)
        assert r.value == pytest.approx(naive_mals(A, T, Ap, Tp), abs=1e-12)
        # exclusive attributes (one per row; soft predictions sum to 1 per row): the table form on
        # co-occurrence counts equals the labels form, because row sums of T.T @ A count T
        Ax = np.eye(na, dtype=int)[rng.integers(0, na, n)]
        Apx = (
            rng.dirichlet(np.ones(na), n) if soft else np.eye(na, dtype=int)[rng.integers(0, na, n)]
        )
        T[0], Tp[0] = 1, 1  # every task occurs at least once
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            rl = mals_bias_amplification_labels(Ax, T, attribute_preds=Apx, task_preds=Tp)
            rt = mals_bias_amplification(Tp.T @ Apx + 0.0, T.T @ Ax + 0.0)
        assert rt.value == pytest.approx(rl.value, abs=1e-12)
        assert rl.value == pytest.approx(naive_mals(Ax, T, Apx, Tp), abs=1e-12)


def test_mals_train_and_errors():
    A, T, P = groups([(60, 0, 0, 0), (30, 0, 1, 0), (10, 1, 0, 1), (20, 1, 1, 1)], 2)
    # training data where A2 dominates T=1 -> selection flips to A2: delta = 20/20 - 20/50 = .6
    Atr, Ttr, _ = groups([(10, 0, 1, 0), (40, 1, 1, 0)], 2)
    r = mals_bias_amplification_labels(
        A, T, attribute_preds=A, task_preds=P, attributes_train=Atr, tasks_train=Ttr
    )
    assert r.value == pytest.approx(0.6, abs=1e-15)
    assert mals_bias_amplification(
        [[0, 20]], [[30, 20]], base_train=[[10, 40]]
    ).value == pytest.approx(0.6)
    with pytest.raises(BiasampError, match="got only attributes_train"):
        mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P, attributes_train=Atr)
    with pytest.raises(BiasampError, match=r"model must be non-negative.*-1.0"):
        mals_bias_amplification([[-1, 2]], [[1, 1]])
    with pytest.raises(
        BiasampError, match=r"model must have the shape of base \(1, 2\); got \(1, 3\)"
    ):
        mals_bias_amplification([[1, 1, 1]], [[1, 1]])
    with pytest.raises(BiasampError, match="task_preds must have the shape of tasks"):
        mals_bias_amplification_labels(A, T, attribute_preds=A, task_preds=P[:5])


# ---------------------------------------------------------------- Multi->


def _compas(tab_true, tab_pred):
    r, c, cp = [], [], []
    for i in range(2):
        for j in range(2):
            r += [i] * tab_true[i][j]
            c += [j] * tab_true[i][j]
        cp += [0] * tab_pred[i][0] + [1] * tab_pred[i][1]
    eye = np.eye(2, dtype=int)
    return eye[r], eye[c], eye[cp]


def test_multi_dpa_paper_compas_values():
    # DPA paper Table 3, Multi-> row: unbalanced T->A .078, A->T .038; balanced .066, .099
    T, A, Ahat = _compas([[1229, 1402], [874, 1773]], [[1056, 1575], [1115, 1532]])
    r = multi_attribute_bias_amplification(A, T, direction="T->A", attribute_preds=Ahat)
    assert r.value == pytest.approx((2 * 173 / 2631 + 2 * 241 / 2647) / 4, abs=1e-15)
    assert round(r.value, 3) == 0.078
    d = np.array(
        [-173 / 2631, 173 / 2631, 241 / 2647, -241 / 2647]
    )  # task-major: (T0,A0),(T0,A1),...
    assert r.variance == pytest.approx(np.var(d), abs=1e-15)
    assert r.groups in ([(1,), (0,)], [(0,), (1,)])
    A2, T2, That = _compas([[1229, 874], [1402, 1773]], [[1165, 938], [1546, 1629]])
    r = multi_attribute_bias_amplification(A2, T2, direction="A->T", task_preds=That)
    assert round(r.value, 3) == 0.038
    # balanced: T->A |Δ| = 209/1748 (x2), 22/1748 (x2) -> .066076; A->T 271/1748, 74/1748 -> .098684
    T, A, Ahat = _compas([[874, 874], [874, 874]], [[1083, 665], [896, 852]])
    r = multi_attribute_bias_amplification(A, T, direction="T->A", attribute_preds=Ahat)
    assert r.value == pytest.approx((209 + 22) / 2 / 1748, abs=1e-15) and round(r.value, 3) == 0.066
    A2, T2, That = _compas([[874, 874], [874, 874]], [[1145, 603], [948, 800]])
    r = multi_attribute_bias_amplification(A2, T2, direction="A->T", task_preds=That)
    assert r.value == pytest.approx((271 + 74) / 2 / 1748, abs=1e-15) and round(r.value, 3) == 0.099


def naive_multi(A, T, Ap, Tp, direction):
    combos = sorted({tuple(r) for r in A.tolist() if any(r)})
    deltas = []
    for t in range(T.shape[1]):
        for m in combos:
            if direction == "attribute_to_task":
                idx = [i for i in range(len(A)) if all(A[i][j] for j in range(len(m)) if m[j])]
                deltas.append(np.mean([Tp[i][t] for i in idx]) - np.mean([T[i][t] for i in idx]))
            else:
                idx = [i for i in range(len(T)) if T[i][t] == 1]
                if not idx:
                    deltas.append(np.nan)
                    continue
                pm = np.mean([np.prod([Ap[i][j] for j in range(len(m)) if m[j]]) for i in idx])
                pb = np.mean([float(all(A[i][j] for j in range(len(m)) if m[j])) for i in idx])
                deltas.append(pm - pb)
    d = np.array(deltas)
    return np.nanmean(np.abs(d)), np.nanvar(d), len(combos)


@pytest.mark.parametrize("direction", ["attribute_to_task", "task_to_attribute"])
@pytest.mark.parametrize("soft", [False, True])
def test_multi_matches_naive_loop(direction, soft):
    rng = np.random.default_rng(8)
    for _ in range(5):
        n, na, nt = int(rng.integers(30, 80)), int(rng.integers(2, 6)), int(rng.integers(1, 41))
        A = (rng.random((n, na)) < 0.4).astype(int)
        T = (rng.random((n, nt)) < 0.3).astype(int)
        Ap = rng.random((n, na)) if soft else (rng.random((n, na)) < 0.4).astype(int)
        Tp = rng.random((n, nt)) if soft else (rng.random((n, nt)) < 0.3).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = multi_attribute_bias_amplification(
                A, T, direction=direction, attribute_preds=Ap, task_preds=Tp
            )
        value, var, n_groups = naive_multi(A, T, Ap, Tp, direction)
        assert r.value == pytest.approx(value, abs=1e-12)
        assert r.variance == pytest.approx(var, abs=1e-12)
        assert len(r.groups) == n_groups


def test_multi_membership_is_superset():
    # groups {0} and {0, 1} are observed; a row with attributes {0, 1} belongs to both groups
    A = np.array([[1, 0], [1, 0], [1, 1], [1, 1]])
    T = np.array([[1], [0], [1], [1]])
    That = np.array([[1], [1], [1], [1]])
    r = multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=That)
    # group {0}: rows 0-3, P(T)=3/4 -> delta 1/4; group {0,1}: rows 2-3, P(T)=1 -> delta 0
    assert r.groups == [(0,), (0, 1)]
    assert r.by_group["delta"].tolist() == [0.25, 0.0]
    assert r.value == 0.125 and r.variance == 0.015625  # mean |d|; var of [.25, 0]


def test_multi_does_not_enumerate_subsets():
    # 40 attributes -> 2**40 subsets; only the handful of observed combinations are used
    rng = np.random.default_rng(0)
    A = np.zeros((200, 40), dtype=int)
    A[np.arange(200), rng.integers(0, 40, 200)] = 1
    A[:50] = 0
    A[:50, [0, 1]] = 1  # 50 rows share the combination {0, 1}
    T = (rng.random((200, 3)) < 0.5).astype(int)
    r = multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=T)
    assert r.value == 0.0 and len(r.groups) == len({tuple(x) for x in A.tolist()})
    r = multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=T, min_count=10)
    counts = {}
    for x in A.tolist():
        key = tuple(j for j in range(40) if x[j])
        counts[key] = counts.get(key, 0) + 1
    assert sorted(r.groups) == sorted(k for k, c in counts.items() if c >= 10)
    assert (0, 1) in r.groups


def test_multi_errors():
    A, T = np.array([[1, 0], [0, 1]]), np.array([[1], [0]])
    with pytest.raises(BiasampError, match="min_count must be a positive integer; got 0"):
        multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=T, min_count=0)
    with pytest.raises(BiasampError, match="no attribute combination occurs at least min_count=5"):
        multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=T, min_count=5)
    with pytest.raises(BiasampError, match="attribute_preds is required"):
        multi_attribute_bias_amplification(A, T, direction="T->A")
    with pytest.raises(BiasampError, match="direction must be one of"):
        multi_attribute_bias_amplification(A, T, direction="sideways", task_preds=T)
    with pytest.raises(BiasampError, match="got only tasks_train"):
        multi_attribute_bias_amplification(A, T, direction="A->T", task_preds=T, tasks_train=T)


@pytest.mark.parametrize(
    "direction, given, missing",
    [
        ("A->T", {"attribute_preds": np.eye(2, dtype=int)}, "task_preds"),
        ("T->A", {"task_preds": np.eye(2, dtype=int)}, "attribute_preds"),
    ],
)
def test_multi_and_dpa_name_the_missing_predictions(direction, given, missing):
    from biasamp.metrics import directional_predictability_amplification

    A = T = np.eye(2, dtype=int)
    canonical = {"A->T": "attribute_to_task", "T->A": "task_to_attribute"}[direction]
    pattern = f"^{missing} is required for direction '{canonical}'; got None$"
    with pytest.raises(BiasampError, match=pattern):
        multi_attribute_bias_amplification(A, T, direction=direction, **given)
    with pytest.raises(BiasampError, match=pattern):
        directional_predictability_amplification(A, T, direction=direction, **given)
    # the predictions of the other direction are checked against what they predict
    other = {"task_preds": "tasks", "attribute_preds": "attributes"}[missing]
    with pytest.raises(BiasampError, match=f"{missing} must have the shape of {other}"):
        multi_attribute_bias_amplification(
            A, T, direction=direction, **{missing: np.ones((3, 2), dtype=int)}
        )
