"""Invariances common to the metric family, run over a registry of metrics.

- permuting tasks / attributes permutes the per-pair table and leaves the value unchanged;
- scaling the base counts (tables) or repeating every example (labels) changes nothing;
- a model equal to the base conditional (or to the labels) gives exactly 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp.metrics import (
    directional_bias_amplification,
    directional_bias_amplification_labels,
    mals_bias_amplification,
    mals_bias_amplification_labels,
    multi_attribute_bias_amplification,
)

TASKS = [f"t{i}" for i in range(9)]
ATTRS = ["he", "she", "they"]


def _table_model(B, direction, rng):
    M = rng.random(B.shape) + 0.01
    return M / M.sum(axis=0 if direction == "attribute_to_task" else 1, keepdims=True)


# name -> (function(model, base) -> result, direction used to build the model, "model equal base" builder)
TABLE_METRICS = {
    "biasamp_A->T": (
        lambda M, B: directional_bias_amplification(M, B, direction="A->T"),
        "attribute_to_task",
        lambda B: B / B.sum(axis=0),
    ),
    "biasamp_T->A": (
        lambda M, B: directional_bias_amplification(M, B, direction="T->A"),
        "task_to_attribute",
        lambda B: B.div(B.sum(axis=1), axis=0),
    ),
    "mals_table": (mals_bias_amplification, "task_to_attribute", lambda B: B),
}

LABEL_METRICS = {
    "biasamp_labels_A->T": lambda A, T, Ap, Tp: directional_bias_amplification_labels(
        A, T, direction="A->T", task_preds=Tp
    ),
    "biasamp_labels_T->A": lambda A, T, Ap, Tp: directional_bias_amplification_labels(
        A, T, direction="T->A", attribute_preds=Ap
    ),
    "mals_labels": lambda A, T, Ap, Tp: mals_bias_amplification_labels(
        A, T, attribute_preds=Ap, task_preds=Tp
    ),
    "multi_A->T": lambda A, T, Ap, Tp: multi_attribute_bias_amplification(
        A, T, direction="A->T", task_preds=Tp
    ),
    "multi_T->A": lambda A, T, Ap, Tp: multi_attribute_bias_amplification(
        A, T, direction="T->A", attribute_preds=Ap
    ),
}


def _frame(result):
    df = result.by_pair if hasattr(result, "by_pair") else result.by_group
    key = ["task", "attribute"] if "attribute" in df.columns else ["task", "attribute_group"]
    return df.sort_values(key, key=lambda s: s.astype(str)).reset_index(drop=True)


def _tables(seed):
    rng = np.random.default_rng(seed)
    B = pd.DataFrame(rng.integers(1, 60, size=(9, 3)).astype(float), index=TASKS, columns=ATTRS)
    return rng, B


@pytest.mark.parametrize("name", sorted(TABLE_METRICS))
def test_table_permutation(name):
    fn, direction, _ = TABLE_METRICS[name]
    rng, B = _tables(1)
    M = pd.DataFrame(_table_model(B.to_numpy(), direction, rng), index=TASKS, columns=ATTRS)
    r = fn(M, B)
    pt, pa = rng.permutation(9), rng.permutation(3)
    rp = fn(M.iloc[pt, pa], B.iloc[pt, pa])
    assert rp.value == pytest.approx(r.value, abs=1e-14)
    # by_pair is permuted: same rows once sorted, and in the new order task-major
    pd.testing.assert_frame_equal(_frame(rp), _frame(r), atol=1e-14, rtol=0, check_dtype=False)
    assert rp.by_pair["task"].tolist()[::3] == [TASKS[i] for i in pt]
    # numpy input: by_pair rows follow the permutation of positions
    rn = fn(M.to_numpy()[np.ix_(pt, pa)], B.to_numpy()[np.ix_(pt, pa)])
    assert rn.value == pytest.approx(r.value, abs=1e-14)
    np.testing.assert_allclose(
        rn.by_pair["contribution"].to_numpy().reshape(9, 3),
        r.by_pair["contribution"].to_numpy().reshape(9, 3)[np.ix_(pt, pa)],
        atol=1e-14,
    )


@pytest.mark.parametrize("name", sorted(TABLE_METRICS))
def test_table_scaling_base(name):
    fn, direction, _ = TABLE_METRICS[name]
    rng, B = _tables(2)
    M = pd.DataFrame(_table_model(B.to_numpy(), direction, rng), index=TASKS, columns=ATTRS)
    r = fn(M, B)
    for scale in (1 / B.to_numpy().sum(), 7.0, 1e6):
        rs = fn(M, B * scale)
        assert rs.value == pytest.approx(r.value, abs=1e-13)
        assert rs.by_pair["association"].tolist() == r.by_pair["association"].tolist()
        np.testing.assert_allclose(rs.by_pair["p_base"], r.by_pair["p_base"], atol=1e-13)


@pytest.mark.parametrize("name", sorted(TABLE_METRICS))
def test_table_model_equal_base_is_zero(name):
    fn, _, equal = TABLE_METRICS[name]
    _, B = _tables(3)
    r = fn(equal(B), B)
    assert r.value == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(r.by_pair["delta"], 0.0, atol=1e-15)


def _labels(seed, n=120):
    rng = np.random.default_rng(seed)
    A = pd.DataFrame(np.eye(3, dtype=int)[rng.integers(0, 3, n)], columns=ATTRS)
    A.iloc[:10, 0] = 1  # a few rows with two attributes
    T = pd.DataFrame((rng.random((n, 9)) < 0.35).astype(int), columns=TASKS)
    Ap = pd.DataFrame(rng.random((n, 3)), columns=ATTRS)
    Tp = pd.DataFrame(rng.random((n, 9)), columns=TASKS)
    return rng, A, T, Ap, Tp


@pytest.mark.parametrize("name", sorted(LABEL_METRICS))
def test_labels_permutation(name):
    fn = LABEL_METRICS[name]
    rng, A, T, Ap, Tp = _labels(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = fn(A, T, Ap, Tp)
        pt, pa = rng.permutation(9), rng.permutation(3)
        rows = rng.permutation(len(A))  # example order is irrelevant too
        rp = fn(A.iloc[rows, pa], T.iloc[rows, pt], Ap.iloc[rows, pa], Tp.iloc[rows, pt])
    assert rp.value == pytest.approx(r.value, abs=1e-13)
    a, b = _frame(rp), _frame(r)
    if "attribute_group" in a.columns:  # group names follow the column order: compare as sets
        for df in (a, b):
            df["attribute_group"] = df["attribute_group"].map(
                lambda s: "+".join(sorted(s.split("+")))
            )
        a = a.sort_values(["task", "attribute_group"]).reset_index(drop=True)
        b = b.sort_values(["task", "attribute_group"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, atol=1e-13, rtol=0, check_dtype=False)


@pytest.mark.parametrize("name", sorted(LABEL_METRICS))
def test_labels_repeating_examples(name):
    fn = LABEL_METRICS[name]
    _, A, T, Ap, Tp = _labels(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = fn(A, T, Ap, Tp)
        r3 = fn(pd.concat([A] * 3), pd.concat([T] * 3), pd.concat([Ap] * 3), pd.concat([Tp] * 3))
    assert r3.value == pytest.approx(r.value, abs=1e-13)


@pytest.mark.parametrize("name", sorted(LABEL_METRICS))
def test_labels_model_equal_truth_is_zero(name):
    fn = LABEL_METRICS[name]
    _, A, T, _, _ = _labels(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = fn(A, T, A, T)
    assert r.value == 0.0
