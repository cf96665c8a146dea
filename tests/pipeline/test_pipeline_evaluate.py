"""Tests of the model-free stage (biasamp.pipeline.evaluate): evaluate_tables, compat tables."""

from __future__ import annotations

import dataclasses
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.base_rates import BaseRateTable
from biasamp.pipeline import ProbeConfig, evaluate_tables


class _Source:
    """A fixed joint table, the same for both directions."""

    def __init__(self, name, joint):
        self.name = name
        self._joint = joint

    def table(self, tasks, attributes, *, direction=None):
        return BaseRateTable(
            pd.DataFrame(np.asarray(self._joint, dtype=float), index=tasks, columns=attributes),
            provenance={"name": "test", "sha256": "0" * 64},
        )


TASKS = ["t1", "t2", "t3", "t4"]
ATTRS = ["he", "she"]
B = np.array([[30, 10], [10, 30], [20, 20], [5, 15]], dtype=float)
M_AT = np.array([[0.5, 0.2], [0.1, 0.4], [0.3, 0.3], [0.1, 0.1]])
M_TA = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5], [0.2, 0.8]])


def _golden_tables():
    # template 0: the spec's golden model matrices; template 1: the base's own conditionals
    # (the model equals the base, so BiasAmp-> is exactly 0 there)
    at = np.stack([M_AT, B / B.sum(axis=0)])
    ta = np.stack([M_TA, B / B.sum(axis=1, keepdims=True)])
    return at, ta


def test_evaluate_tables_golden_values():
    at, ta = _golden_tables()
    ev = evaluate_tables(
        at,
        ta,
        TASKS,
        ATTRS,
        [_Source("golden", B)],
        template_ids=["a", "b"],
        n_resamples=200,
        seed=1,
    )
    s = ev.summary.set_index("direction")
    # A->T, template a: he column (1/2-6/13) + (2/13-1/10) + (3/10-4/13) - (1/10-1/13)
    #   = 5/130 + 7/130 - 1/130 - 3/130 = 4/65;  she column -(1/5-2/15) + 0 - (3/10-4/15)
    #   + (1/10-1/5) = -1/15 - 1/30 - 1/10 = -1/5;  value = (4/65 - 1/5) / 8 = -9/520
    v_at = float(F(-9, 520))
    assert s.loc["attribute_to_task", "per_template"] == pytest.approx([v_at, 0.0], abs=1e-15)
    # mean over the two templates = -9/1040, population std = |(-9/520 - 0)| / 2 = 9/1040
    assert s.loc["attribute_to_task", "mean"] == pytest.approx(-9 / 1040, abs=1e-15)
    assert s.loc["attribute_to_task", "std"] == pytest.approx(9 / 1040, abs=1e-15)
    # T->A template a: per pair [[.05,.05],[-.05,-.05],[0,0],[.05,.05]] -> 0.1/8 = 1/80
    assert s.loc["task_to_attribute", "per_template"] == pytest.approx([1 / 80, 0.0], abs=1e-15)
    assert s.loc["task_to_attribute", "mean"] == pytest.approx(1 / 160, abs=1e-15)
    assert s.loc["task_to_attribute", "std"] == pytest.approx(1 / 160, abs=1e-15)
    assert list(s["n_templates"]) == [2, 2]
    assert list(ev.summary["base_rates"]) == ["golden", "golden"]
    # per pair: T->A (t1, he) delta = (.8 - .75 + 0) / 2 = .025, contribution the same (y=+1)
    bp = ev.by_pair.set_index(["direction", "task", "attribute"])
    assert bp.loc[("task_to_attribute", "t1", "he"), "delta"] == pytest.approx(0.025, abs=1e-15)
    assert bp.loc[("task_to_attribute", "t1", "he"), "contribution"] == pytest.approx(
        0.025, abs=1e-15
    )
    # A->T (t2, he): delta = (.1 - 2/13 + 0) / 2 = -7/260, association -1, contribution +7/260
    assert bp.loc[("attribute_to_task", "t2", "he"), "delta"] == pytest.approx(-7 / 260, abs=1e-15)
    assert bp.loc[("attribute_to_task", "t2", "he"), "association"] == -1
    assert bp.loc[("attribute_to_task", "t2", "he"), "contribution"] == pytest.approx(
        7 / 260, abs=1e-15
    )
    # p_model is the mean over templates: (.1 + 10/65) / 2
    assert bp.loc[("attribute_to_task", "t2", "he"), "p_model"] == pytest.approx(
        (0.1 + 10 / 65) / 2, abs=1e-15
    )
    assert len(ev.by_pair) == 2 * 4 * 2
    assert list(ev.per_template["template_id"]) == ["a", "b", "a", "b"]


def test_evaluate_tables_ci_is_metrics_bootstrap():
    from biasamp.metrics import bootstrap_ci

    at, ta = _golden_tables()
    ev = evaluate_tables(
        at, ta, TASKS, ATTRS, [_Source("golden", B)], n_resamples=500, seed=7, confidence=0.9
    )
    for rec in ev.summary.to_dict("records"):
        lo, hi = bootstrap_ci(
            np.asarray(rec["per_template"]), n_resamples=500, seed=7, confidence=0.9
        )
        # the joint bootstrap with a fixed base: the per-template bootstrap, same draws
        assert (rec["ci_low"], rec["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
        assert rec["ci_low"] <= rec["ci_high"]


def _naive_value(base, model, direction):
    """BiasAmp-> on probability tables (reference-semantics section 2), cell by cell."""
    n_t, n_a = base.shape
    total = sum(base[i][j] for i in range(n_t) for j in range(n_a))
    col = [sum(base[i][j] for i in range(n_t)) for j in range(n_a)]
    row = [sum(base[i][j] for j in range(n_a)) for i in range(n_t)]
    acc = 0.0
    for i in range(n_t):
        for j in range(n_a):
            y = np.sign(base[i][j] / col[j] - row[i] / total)
            if direction == "attribute_to_task":
                delta = model[i][j] - base[i][j] / col[j]
            else:
                delta = model[i][j] - base[i][j] / row[i]
            acc += y * delta
    return acc / (n_t * n_a)


def test_evaluate_tables_matches_naive_on_random_tables():
    rng = np.random.default_rng(3)
    n_tpl, n_t, n_a = 4, 6, 3
    tasks = [f"job{i}" for i in range(n_t)]
    attrs = ["he", "she", "they"]
    at = rng.random((n_tpl, n_t, n_a)) + 0.01
    at /= at.sum(axis=1, keepdims=True)
    ta = rng.random((n_tpl, n_t, n_a)) + 0.01
    ta /= ta.sum(axis=2, keepdims=True)
    bases = {
        "b1": rng.integers(1, 50, (n_t, n_a)).astype(float),
        "b2": rng.random((n_t, n_a)) + 0.05,
    }
    ev = evaluate_tables(
        at, ta, tasks, attrs, [_Source(k, v) for k, v in bases.items()], n_resamples=50, seed=0
    )
    for rec in ev.summary.to_dict("records"):
        tables = at if rec["direction"] == "attribute_to_task" else ta
        naive = [
            _naive_value(bases[rec["base_rates"]], tables[k], rec["direction"])
            for k in range(n_tpl)
        ]
        assert rec["per_template"] == pytest.approx(naive, abs=1e-12)
        assert rec["mean"] == pytest.approx(np.mean(naive), abs=1e-12)
        assert rec["std"] == pytest.approx(
            np.sqrt(np.mean((np.array(naive) - np.mean(naive)) ** 2)), abs=1e-12
        )
    # invariant: the mean of the per-pair contributions is the headline mean
    g = ev.by_pair.groupby(["base_rates", "direction"], sort=False)["contribution"].mean()
    for rec in ev.summary.to_dict("records"):
        assert g[(rec["base_rates"], rec["direction"])] == pytest.approx(rec["mean"], abs=1e-12)


def test_evaluate_tables_zero_when_model_equals_base():
    rng = np.random.default_rng(5)
    base = rng.integers(1, 30, (5, 2)).astype(float)
    at = np.stack([base / base.sum(axis=0)] * 3)
    ta = np.stack([base / base.sum(axis=1, keepdims=True)] * 3)
    ev = evaluate_tables(at, ta, list("abcde"), ATTRS, [_Source("s", base)], n_resamples=20)
    assert np.allclose(ev.summary["mean"], 0.0, atol=1e-15)
    assert np.allclose(ev.summary["std"], 0.0, atol=1e-15)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tables_at": np.ones((2, 4, 2))}, r"tables_at: every column must sum to 1"),
        ({"tables_ta": np.ones((2, 4, 2)) / 4}, r"tables_ta: every row must sum to 1"),
        ({"tables_at": np.ones((2, 3, 2)) / 3}, r"tables_at must have shape \(n_templates, 4, 2\)"),
        ({"tables_at": np.ones((3, 4, 2)) / 4}, r"same number of templates; got 3 and 2"),
        ({"template_ids": ["x"]}, r"template_ids must have 2 entries; got 1"),
        ({"sources": []}, r"sources must name at least one"),
        ({"attributes": ["he"]}, r"attributes must name at least 2 attributes"),
        (
            {
                "tasks": ["nurse"],
                "tables_at": np.ones((2, 1, 2)),
                "tables_ta": np.ones((2, 1, 2)) / 2,
            },
            r"^tasks must name at least 2 tasks; got \['nurse'\]$",
        ),
        # issue 29: a degenerate base table is refused where it enters, as the probe does
        (
            {"sources": [_Source("g", B), _Source("half", [[1, 1], [3, 3], [2, 2], [5, 5]])]},
            r"^base_rates: source 'half': every one of the requested tasks holds the attributes "
            r"in their overall proportion \(P\(T\|A\) = P\(T\), e.g. all 50/50\), so no task is "
            r"associated with an attribute and BiasAmp-> is 0 by construction; leave the source",
        ),
        (
            {"sources": [_Source("noshe", [[1, 0], [3, 0], [2, 0], [5, 0]])]},
            r"^base_rates: source 'noshe': attribute 'she' never occurs",
        ),
    ],
)
def test_evaluate_tables_errors(kwargs, match):
    at, ta = _golden_tables()
    args = {
        "tables_at": at,
        "tables_ta": ta,
        "tasks": TASKS,
        "attributes": ATTRS,
        "sources": [_Source("g", B)],
    }
    tpl = kwargs.pop("template_ids", None)
    args.update(kwargs)
    with pytest.raises(BiasampError, match=match):
        evaluate_tables(
            args["tables_at"],
            args["tables_ta"],
            args["tasks"],
            args["attributes"],
            args["sources"],
            template_ids=tpl,
            n_resamples=10,
        )


def test_evaluate_tables_rejects_nan_probabilities():
    at, ta = _golden_tables()
    at = at.copy()
    at[0, 0, 0] = np.nan
    with pytest.raises(BiasampError, match="tables_at must hold finite non-negative"):
        evaluate_tables(at, ta, TASKS, ATTRS, [_Source("g", B)], n_resamples=10)


# ------------------------------------------------------------------- compat (wang2021)
EPS = 1e-7
OCC = [
    "janitor",
    "cook",
    "mover",
    "laborer",
    "constructor",
    "chief",
    "developer",
    "carpenter",
    "lawyer",
    "farmer",
    "driver",
    "salesperson",
    "physician",
    "guard",
    "analyst",
    "sheriff",
    "cashier",
    "nurse",
    "secretary",
    "auditor",
    "cleaner",
    "receptionist",
    "counselor",
    "designer",
    "hairdresser",
    "writer",
    "housekeeper",
    "baker",
    "accountant",
    "editor",
    "librarian",
    "sewer",
]
PCT_F = [
    34,
    38,
    18,
    3.5,
    3.5,
    27,
    20,
    2.1,
    35,
    22,
    6,
    48,
    38,
    22,
    41,
    14,
    73,
    90,
    95,
    61,
    89,
    90,
    73,
    54,
    92,
    63,
    89,
    65,
    61,
    52,
    84,
    80,
]
EMPLOYED = [
    2276,
    2179,
    1900,
    1801,
    1801,
    1649,
    1483,
    1359,
    1133,
    1042,
    3542,
    3312,
    1061,
    923,
    902,
    708,
    3260,
    3102,
    2744,
    1777,
    1485,
    1331,
    869,
    787,
    806,
    229,
    1485,
    224,
    1777,
    167,
    190,
    79,
]


def _paper_bases(kind, n_attr):
    """The paper's base matrices (A->T before column normalisation, T->A), built by hand."""
    n = len(OCC)
    at = [[0.0] * n_attr for _ in range(n)]
    ta = [[0.0] * n_attr for _ in range(n)]
    for i in range(n):
        male = i < 16
        for j in range(n_attr):
            if kind == "uniform":
                # A->T: 1/(2*16) for two pronouns; the paper's `1./2*16` (= 8.0) for three
                at[i][j] = 1.0 / (2 * 16) if n_attr == 2 else 1.0 / 2 * 16
                ta[i][j] = 0.5 if n_attr == 2 else 1.0 / 3.0
                stereotyped = (j == 0) == male and j < 2
                at[i][j] += EPS if stereotyped else -EPS
                ta[i][j] += EPS if stereotyped else -EPS
            else:  # labor: employed x share for A->T, raw shares for T->A
                share_f = PCT_F[i] / 100.0
                at[i][j] = EMPLOYED[i] * (1.0 - share_f) if j == 0 else EMPLOYED[i] * share_f
                ta[i][j] = 1.0 - share_f if j == 0 else share_f
    return np.array(at), np.array(ta)


def _paper_value(base, model, direction):
    """Section 3 of reference-semantics, literally: normalise, loop, np.sign, nanmean."""
    base = np.array(base, dtype=float)
    n_t, n_a = base.shape
    if direction == "attribute_to_task":
        base = base / np.sum(base, axis=0, keepdims=True)
    n_attr = np.sum(base, axis=0)
    total = np.sum(n_attr)
    p_t = np.sum(base, axis=1) / total
    diff = np.zeros((n_t, n_a))
    for i in range(n_t):
        for j in range(n_a):
            if direction == "attribute_to_task":
                data = base[i][j] / n_attr[j]
                pred = model[i][j] / n_attr[j]
            else:
                data = base[i][j] / np.sum(base[i])
                pred = model[i][j] / np.sum(model[i])
            d = pred - data
            ind = np.sign(base[i][j] / n_attr[j] - p_t[i])
            diff[i][j] = 0.0 if ind == 0 else (d if ind == 1 else -d)
    return float(np.nanmean(diff))


def _random_tables(n_attr, n_tpl=20, seed=0):
    rng = np.random.default_rng(seed)
    at = rng.dirichlet(np.ones(len(OCC)), size=(n_tpl, n_attr)).transpose(0, 2, 1)
    ta = rng.dirichlet(np.ones(n_attr), size=(n_tpl, len(OCC)))
    return at, ta


@pytest.mark.parametrize(
    "kind, attrs, source",
    [
        ("uniform", ["he", "she"], "uniform"),
        ("uniform", ["he", "she", "they"], "uniform"),
        ("labor", ["he", "she"], "labor-2016"),
    ],
)
def test_compat_pipeline_equals_paper_procedure(kind, attrs, source):
    base_rates = pytest.importorskip("biasamp.base_rates")
    cfg = ProbeConfig(
        models=["m"], compat="wang2021", base_rates=[source], attributes=attrs
    ).resolved()
    assert cfg.templates == "wang2021" and cfg.scoring == "first-piece"
    name = cfg.base_rates[0]
    assert name in base_rates.list_sources()
    at, ta = _random_tables(len(attrs), seed=len(attrs) + (kind == "labor"))
    ev = evaluate_tables(at, ta, OCC, attrs, [name], n_resamples=100, seed=0)
    base_at, base_ta = _paper_bases(kind, len(attrs))
    s = ev.summary.set_index("direction")
    for direction, tables, base in (
        ("attribute_to_task", at, base_at),
        ("task_to_attribute", ta, base_ta),
    ):
        naive = [_paper_value(base, tables[k], direction) for k in range(len(tables))]
        got = s.loc[direction, "per_template"]
        assert len(got) == 20
        np.testing.assert_allclose(got, naive, rtol=0, atol=1e-9)
        # mean +- population std over the 20 templates, as the paper prints them
        assert s.loc[direction, "mean"] == pytest.approx(np.mean(naive), abs=1e-9)
        assert s.loc[direction, "std"] == pytest.approx(np.std(naive), abs=1e-9)


@pytest.mark.filterwarnings("ignore")
def test_compat_wikipedia_zero_rows_count_as_zero():
    """Paper: a T->A row of zeros has indicator sign(0 - 0) = 0, so its 0/0 diff becomes 0."""
    base_rates = pytest.importorskip("biasamp.base_rates")
    at, ta = _random_tables(2, seed=9)
    counts = (
        base_rates.get_source("wikitext103-valtest-wang2021")
        .table(OCC, ["he", "she"], direction="task_to_attribute")
        .joint.loc[OCC, ["he", "she"]]
        .to_numpy(dtype=float)
    )
    # this (small-corpus) table has zero rows, so the quirk matters
    assert (counts.sum(axis=1) == 0).any()
    ev = evaluate_tables(
        at, ta, OCC, ["he", "she"], ["wikitext103-valtest-wang2021"], n_resamples=10
    )
    s = ev.summary.set_index("direction")
    for direction, tables in (("attribute_to_task", at), ("task_to_attribute", ta)):
        naive = [_paper_value(counts, tables[k], direction) for k in range(20)]
        np.testing.assert_allclose(s.loc[direction, "per_template"], naive, rtol=0, atol=1e-9)
    # the compat tables carry the paper's convention (undefined="tie"); the same counts with
    # the default convention leave those cells out instead
    compat = base_rates.get_source("wikitext103-valtest-wang2021")
    assert compat.table(OCC, ["he", "she"], direction="task_to_attribute").undefined == "tie"

    class _Default:
        name = "wikipedia-default-convention"

        def table(self, tasks, attributes, *, direction=None):
            return dataclasses.replace(
                compat.table(tasks, attributes, direction=direction), undefined=None
            )

    default = evaluate_tables(at, ta, OCC, ["he", "she"], [_Default()], n_resamples=10)
    n_zero = int((counts.sum(axis=1) == 0).sum())
    v0 = default.summary.set_index("direction").loc["task_to_attribute", "per_template"][0]
    v1 = s.loc["task_to_attribute", "per_template"][0]
    # compat mean over 64 cells = default mean over the 64 - 2 * n_zero defined cells x their share
    assert v1 == pytest.approx(v0 * (64 - 2 * n_zero) / 64, abs=1e-12)
    with pytest.raises(TypeError, match="compat"):  # compat is data of the tables, not a flag
        evaluate_tables(at, ta, OCC, ["he", "she"], ["uniform"], compat="wang2021")


def test_compat_uniform3_they_indicator_quirk():
    """A->T: `they` gets indicator -1 for every occupation; T->A: 0 (rounding, as the paper)."""
    pytest.importorskip("biasamp.base_rates")
    at, ta = _random_tables(3, n_tpl=2, seed=11)
    ev = evaluate_tables(at, ta, OCC, ["he", "she", "they"], ["uniform-wang2021"], n_resamples=10)
    they = ev.by_pair[ev.by_pair["attribute"] == "they"]
    assert set(they[they["direction"] == "attribute_to_task"]["association"]) == {-1.0}
    assert set(they[they["direction"] == "task_to_attribute"]["association"]) == {0.0}
    # check the quirk is real in the paper's arithmetic too
    base_at, base_ta = _paper_bases("uniform", 3)
    b = base_at / base_at.sum(axis=0, keepdims=True)
    assert np.all(np.sign(b[:, 2] / b.sum(axis=0)[2] - b.sum(axis=1) / b.sum()) == -1)
    assert np.all(
        np.sign(base_ta[:, 2] / base_ta.sum(axis=0)[2] - base_ta.sum(axis=1) / base_ta.sum()) == 0
    )
