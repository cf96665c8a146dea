"""The joint bootstrap of biasamp.pipeline.resample: templates, tasks and base counts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from biasamp.metrics import bootstrap_ci, directional_bias_amplification
from biasamp.pipeline.resample import (
    Units,
    interval,
    mean_tables,
    pooled_units,
    replicates,
    resample_counts,
    sign_support,
    source_stream,
    task_draws,
    unit_draws,
)


def _tables(rng, m, t, a, direction):
    x = rng.random((m, t, a)) + 0.05
    return x / x.sum(axis=1 if direction == "attribute_to_task" else 2, keepdims=True)


@pytest.mark.parametrize("direction", ["attribute_to_task", "task_to_attribute"])
def test_templates_only_reproduces_the_per_template_bootstrap(direction):
    rng = np.random.default_rng(4)
    tables = _tables(rng, 12, 6, 2, direction)
    base = rng.integers(1, 40, size=(6, 2)).astype(float)
    base[2] = 0  # a task without data: undefined in T->A
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per = [directional_bias_amplification(t, base, direction=direction) for t in tables]
    values = np.array([r.value for r in per])
    deltas = np.stack([r.by_pair["delta"].to_numpy() for r in per])
    units = pooled_units(tables, None, None, direction)
    mbar = mean_tables(units, unit_draws(units, n_resamples=3000, seed=9))
    rep = replicates(mbar, base, direction=direction, metric={})
    # each replicate is the mean of the drawn templates' values (linearity), same draws
    lo, hi = interval(rep["value"], 0.9, values.mean())
    ref = bootstrap_ci(values, n_resamples=3000, seed=9, confidence=0.9)
    assert (lo, hi) == pytest.approx(ref, abs=1e-12)
    clo, chi = interval(rep["delta"].reshape(3000, -1), 0.9, deltas.mean(axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rlo, rhi = bootstrap_ci(deltas, n_resamples=3000, seed=9, confidence=0.9)
    np.testing.assert_allclose(clo, rlo, atol=1e-12)
    np.testing.assert_allclose(chi, rhi, atol=1e-12)


def test_the_stream_of_a_count_table_depends_on_its_counts_only():
    counts = np.array([[1, 0], [1000, 10], [10, 1000]], dtype=float)
    s = source_stream(counts)
    # the same counts, however held (ints, a copy, Fortran order), give the same stream
    assert source_stream(counts.astype(int)) == source_stream(np.asfortranarray(counts)) == s
    assert source_stream(counts + np.eye(3, 2)) != s
    assert source_stream(counts.reshape(2, 3)) != s  # same bytes, another shape
    a = resample_counts(counts, n_resamples=50, seed=1, stream=s)
    assert (a == resample_counts(counts.copy(), n_resamples=50, seed=1, stream=s)).all()


def test_hand_made_counts_sign_support():
    # task 0: 1 vs 0 sentences; task 1: 1000 vs 10; task 2: 10 vs 1000
    counts = np.array([[1, 0], [1000, 10], [10, 1000]], dtype=float)
    draws = resample_counts(counts, n_resamples=4000, seed=3, stream=0)
    assert draws.shape == (4000, 3, 2) and (draws.sum(axis=(1, 2)) == counts.sum()).all()
    assert (draws[:, 0, 1] == 0).all()  # a cell never seen stays unseen
    # P(task 0 keeps its sentence) = 1 - (1 - 1/2021)^2021 ~ 1 - e^-1
    assert np.mean(draws[:, 0, 0] > 0) == pytest.approx(1 - np.exp(-1), abs=0.03)
    mbar = np.full((4000, 3, 2), 0.5)
    rep = replicates(
        mbar,
        counts,
        direction="task_to_attribute",
        metric={},
        base_draws=draws,
        to_joint=lambda c: c,
    )
    y0 = np.sign(counts / counts.sum(0) - counts.sum(1, keepdims=True) / counts.sum())
    support = sign_support(rep["y"], y0, ~np.isnan(rep["contribution"]))
    assert support[0].max() < 0.95  # 1 vs 0: the sign is not supported
    assert support[1].min() > 0.999 and support[2].min() > 0.999  # 1000 vs 10: supported


def test_base_resampling_widens_the_template_ci():
    rng = np.random.default_rng(7)
    tables = _tables(rng, 20, 8, 2, "task_to_attribute")
    counts = rng.integers(0, 6, size=(8, 2)).astype(float) + np.array([[3, 0]] * 4 + [[0, 3]] * 4)
    units = pooled_units(tables, None, None, "task_to_attribute")
    mbar = mean_tables(units, unit_draws(units, n_resamples=5000, seed=0))
    tpl = replicates(mbar, counts, direction="task_to_attribute", metric={})
    both = replicates(
        mbar,
        counts,
        direction="task_to_attribute",
        metric={},
        base_draws=resample_counts(counts, n_resamples=5000, seed=0, stream=0),
        to_joint=lambda c: c,
    )
    lo_t, hi_t = interval(tpl["value"], 0.95, 0.0)
    lo_b, hi_b = interval(both["value"], 0.95, 0.0)
    assert lo_b <= lo_t and hi_t <= hi_b and (hi_b - lo_b) > 1.5 * (hi_t - lo_t)


def test_task_units_weight_cells_by_draw_counts():
    rng = np.random.default_rng(1)
    tables = _tables(rng, 3, 4, 2, "task_to_attribute")
    base = rng.integers(1, 9, size=(4, 2)).astype(float)
    w = task_draws(4, n_resamples=50, seed=5)
    mbar = np.broadcast_to(tables.mean(axis=0), (50, 4, 2))
    rep = replicates(mbar, base, direction="task_to_attribute", metric={}, task_weights=w)
    r = directional_bias_amplification(tables.mean(axis=0), base, direction="T->A")
    c = r.by_pair["contribution"].to_numpy().reshape(4, 2)
    for b in range(50):  # naive: repeat each task's cells as often as it was drawn
        naive = sum(w[b, t] * c[t].sum() for t in range(4)) / (2 * w[b].sum())
        assert rep["value"][b] == pytest.approx(naive, abs=1e-14)


def test_stratified_units_pool_rows_per_task():
    # T->A of a bound set: units are (template, task) rows, drawn within their task
    X = np.zeros((4, 2, 2))
    X[0, 0], X[1, 0], X[2, 1], X[3, 1] = (0.7, 0.3), (0.6, 0.4), (0.2, 0.8), (0.4, 0.6)
    rows = np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=bool)
    units = Units(X, rows, [0, 0, 1, 1], np.arange(4))
    point = mean_tables(units, None)[0]
    np.testing.assert_allclose(point, [[0.65, 0.35], [0.3, 0.7]], atol=1e-15)
    w = unit_draws(units, n_resamples=200, seed=1)
    assert (w[:, :2].sum(axis=1) == 2).all() and (w[:, 2:].sum(axis=1) == 2).all()
    mbar = mean_tables(units, w)
    for b in range(5):
        for t, (i, j) in enumerate(((0, 1), (2, 3))):
            naive = (w[b, i] * X[i, t] + w[b, j] * X[j, t]) / (w[b, i] + w[b, j])
            np.testing.assert_allclose(mbar[b, t], naive, atol=1e-15)


@pytest.mark.parametrize(
    "sources, units",
    [
        (["uniform", "labor-2016"], "templates"),
        (["wikitext103-valtest", "file:{c1}", "file:{c2}"], "both"),
    ],
)
def test_bootstrap_bytes_bounds_the_measured_peak(tmp_path, sources, units):
    """The estimate the probe checks ``n_resamples`` against before loading a model is above
    what evaluate_tables really allocates (tracemalloc sees numpy's buffers)."""
    import tracemalloc

    from biasamp.base_rates import get_source
    from biasamp.pipeline import evaluate_tables
    from biasamp.pipeline.resample import bootstrap_bytes
    from biasamp.tasks import load_tasks

    tasks, attrs = load_tasks("winobias32").words, ["he", "she"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        counts = get_source("wikitext103-valtest").table(tasks, attrs).counts
    for i in (1, 2):  # two more count tables: each keeps its signs for the agreement
        with open(tmp_path / f"c{i}.csv", "w") as f:
            f.write('# provenance: {"value": "count"}\n')
            (counts + i).to_csv(f)
    names = [s.format(c1=tmp_path / "c1.csv", c2=tmp_path / "c2.csv") for s in sources]
    n_counted = sum(s.startswith(("wikitext", "file:")) for s in sources)
    rng = np.random.default_rng(0)
    at, ta = _tables(rng, 20, 32, 2, "attribute_to_task"), _tables(rng, 20, 32, 2, "x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        try:
            evaluate_tables(at, ta, tasks, attrs, names, n_resamples=4000, resample=units)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    estimate = bootstrap_bytes(4000, n_units=20, n_tasks=32, n_attributes=2, n_resampled=n_counted)
    assert peak <= estimate < 1.5 * peak, (peak, estimate)


@pytest.mark.parametrize(
    "units, n_templates, n_tasks, distinct",
    [
        ("templates", 2, 32, 3),  # {aa, ab, bb}: C(3, 2)
        ("templates", 3, 32, 10),  # C(5, 3)
        ("tasks", 20, 2, 3),
        ("both", 2, 2, 9),
    ],
)
def test_a_ci_from_a_handful_of_distinct_resamples_is_warned(units, n_templates, n_tasks, distinct):
    """The multisets of n units number C(2n-1, n), counted here by brute force; below
    FEW_RESAMPLES a CI is warned of, once, with the number."""
    from itertools import combinations_with_replacement as multisets

    from biasamp._errors import FewResamplesWarning
    from biasamp.pipeline.resample import FEW_RESAMPLES, Resampling

    n = {"templates": n_templates, "tasks": n_tasks}
    kinds = ("templates", "tasks") if units == "both" else (units,)
    assert np.prod([len(list(multisets(range(n[k]), n[k]))) for k in kinds]) == distinct
    with pytest.warns(FewResamplesWarning, match=rf"only {distinct} distinct resamples") as got:
        Resampling(resample=units).warn_if_few(n_templates, n_tasks)
    assert len(got) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 1 unit (no CI at all: warned elsewhere), or enough
        Resampling(resample=units).warn_if_few(1 if units != "tasks" else 20, 1)
        Resampling(resample="templates").warn_if_few(4, 2)  # C(7, 4) = 35
    assert len(list(multisets(range(4), 4))) == 35 >= FEW_RESAMPLES
