"""Honest uncertainty end to end: count-based base rates resampled in every CI, the support of
each association's sign, left-out tasks, sign agreement with a CI, and what the results and
reports keep of it (biasamp.pipeline.evaluate, results, report)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp.base_rates import get_source
from biasamp.cli import main
from biasamp.metrics import bootstrap_ci, directional_bias_amplification
from biasamp.pipeline import evaluate_tables
from biasamp.report import report_text
from biasamp.results import ProbeResult
from biasamp.tasks import load_tasks

TASKS, ATTRS = ["x", "y", "z"], ["he", "she"]
# x rests on one "he" sentence; y on 1000 vs 10; z on 10 vs 1000
COUNTS = np.array([[1, 0], [1000, 10], [10, 1000]], dtype=float)
T2A, A2T = "task_to_attribute", "attribute_to_task"


def _tables(seed=0, m=4):
    rng = np.random.default_rng(seed)
    x = rng.random((m, 3, 2)) + 0.1
    return x / x.sum(axis=1, keepdims=True), x / x.sum(axis=2, keepdims=True)


@pytest.fixture(scope="module")
def counts_source(tmp_path_factory):
    path = tmp_path_factory.mktemp("counts") / "hand.csv"
    rows = [
        f"{t},{a},{int(COUNTS[i, j])}" for i, t in enumerate(TASKS) for j, a in enumerate(ATTRS)
    ]
    path.write_text("task,attribute,count\n" + "\n".join(rows) + "\n")
    return get_source(f"file:{path}")


@pytest.fixture(scope="module")
def fixed_source(tmp_path_factory):
    path = tmp_path_factory.mktemp("fixed") / "probs.csv"
    path.write_text("task,he,she\nx,0.2,0.8\ny,0.7,0.3\nz,0.3,0.7\n")
    return get_source(f"file:{path}")


def _evaluate(sources, **kw):
    at, ta = _tables()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_tables(at, ta, TASKS, ATTRS, sources, n_resamples=4000, seed=5, **kw)


def _row(frame, source, direction):
    sel = frame[(frame["base_rates"] == source) & (frame["direction"] == direction)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_one_sentence_is_unsupported_a_thousand_are_supported(counts_source):
    ev = _evaluate([counts_source])
    bp = ev.by_pair[
        (ev.by_pair["base_rates"] == counts_source.name) & (ev.by_pair["direction"] == T2A)
    ].set_index(["task", "attribute"])
    # x keeps its only sentence in 1 - (1 - 1/2021)^2021 ~ 1 - 1/e of the resamples; in the
    # others its row is empty (undefined), which does not support the sign
    assert bp.loc[("x", "he"), "sign_support"] == pytest.approx(1 - np.exp(-1), abs=0.03)
    assert list(bp["sign_supported"]) == [False, False, True, True, True, True]
    assert bp.loc[("y", "he"), "sign_support"] == bp.loc[("z", "she"), "sign_support"] == 1.0
    s = _row(ev.summary, counts_source.name, T2A)
    assert s["base_resampled"] and s["n_tasks_unsupported"] == 1 and s["n_tasks_excluded"] == 0
    assert ev.bootstrap.base_uncertainty == "resample"


def test_base_uncertainty_none_is_the_template_bootstrap(counts_source):
    ev = _evaluate([counts_source], base_uncertainty="none", confidence=0.9)
    for direction in (A2T, T2A):
        s = _row(ev.summary, counts_source.name, direction)
        assert not s["base_resampled"] and pd.isna(s["n_tasks_unsupported"])
        ref = bootstrap_ci(np.asarray(s["per_template"]), n_resamples=4000, seed=5, confidence=0.9)
        assert (s["ci_low"], s["ci_high"]) == pytest.approx(ref, abs=1e-12)
    assert ev.by_pair["sign_support"].isna().all() and ev.by_pair["sign_supported"].isna().all()


def _counts_file(path, tasks, counts):
    rows = [
        f"{t},{a},{int(counts[i][j])}" for i, t in enumerate(tasks) for j, a in enumerate(ATTRS)
    ]
    path.write_text("task,attribute,count\n" + "\n".join(rows) + "\n")
    return f"file:{path}"


def _twenty_templates(n_tasks, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((20, n_tasks, 2)) + 0.1
    return x / x.sum(axis=1, keepdims=True), x / x.sum(axis=2, keepdims=True)


def test_base_resampling_widens_the_ci_when_every_task_has_data(tmp_path):
    # 100 to 400 sentences per task: the joint CI contains the template-only one (a property of
    # this design, checked; not a theorem of the percentile bootstrap) and the base's sampling
    # error puts only a small bias into the value
    tasks = ["x", "y", "z", "w"]
    src = get_source(
        _counts_file(tmp_path / "c.csv", tasks, [[60, 40], [300, 100], [50, 150], [90, 110]])
    )
    at, ta = _twenty_templates(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed, both = (
            evaluate_tables(
                at, ta, tasks, ATTRS, [src], n_resamples=4000, seed=5, base_uncertainty=b
            )
            for b in ("none", "resample")
        )
    for direction in (A2T, T2A):
        f, b = _row(fixed.summary, src.name, direction), _row(both.summary, src.name, direction)
        assert f["mean"] == b["mean"]  # the point estimate does not move
        assert b["ci_low"] < f["ci_low"] < f["ci_high"] < b["ci_high"]
        assert abs(b["base_bias"]) < 0.1 * (b["ci_high"] - b["ci_low"])
        assert pd.isna(f["base_bias"])
        # x (60 vs 40 against a base P(he) of 500/900) is the one task whose sign is unsure
        assert b["n_tasks_unsupported"] == 1
    bp = both.by_pair[both.by_pair["direction"] == T2A]
    assert set(bp.loc[~bp["sign_supported"].astype(bool), "task"]) == {"x"}


def test_sparse_counts_bias_the_value_and_the_report_says_so(tmp_path, provenance):
    # 1 to 4 sentences per task: sign flips of B - m in the resamples pull BiasAmp down
    tasks = [f"t{i}" for i in range(8)]
    src = get_source(
        _counts_file(
            tmp_path / "c.csv",
            tasks,
            [[2, 1], [1, 2], [3, 1], [1, 3], [2, 2], [1, 0], [0, 1], [2, 1]],
        )
    )
    at, ta = _twenty_templates(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate_tables(at, ta, tasks, ATTRS, [src], n_resamples=4000, seed=5)
    for direction in (A2T, T2A):
        s = _row(ev.summary, src.name, direction)
        assert s["n_tasks_unsupported"] == 8
        assert s["base_bias"] < -0.2 * (s["ci_high"] - s["ci_low"])
        # the bias is the mean of the replicates minus the point: the point lies near the top
        assert s["mean"] > s["ci_low"] + 0.7 * (s["ci_high"] - s["ci_low"])
    res = ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=None,
        audit=pd.DataFrame(),
        mass={},
        provenance=provenance(base_rates=ev.base_provenance, bootstrap=ev.bootstrap),
        config={},
    )
    md = report_text(res)
    t2a = _row(ev.summary, src.name, T2A)
    assert (
        "Values shifted by the sampling error of the counts (on average over the base resamples): "
    ) in md
    assert f"{src.name}, T→A: {t2a['base_bias']:+.4f}" in md
    assert md.count("are too sparse for these values to be read at face value") == 1
    assert f"{src.name}, T→A: 8 of 8 tasks" in md
    assert md.count("Associations not supported by the counts") == 1


def test_min_base_count_leaves_out_tasks_with_little_data(counts_source):
    ev = _evaluate([counts_source], min_base_count=5)
    at, ta = _tables()
    for direction, tables in ((T2A, ta), (A2T, at)):
        s = _row(ev.summary, counts_source.name, direction)
        assert s["n_tasks_excluded"] == 1
        bp = ev.by_pair[(ev.by_pair["direction"] == direction)]
        assert bp.loc[bp["task"] == "x", "contribution"].isna().all()
        # naive: the metric on the full tables, then the mean over the cells of y and z only
        # (their contributions do not depend on x being left out)
        naive = []
        for t in tables:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = directional_bias_amplification(t, COUNTS, direction=direction)
            c = r.by_pair["contribution"].to_numpy().reshape(3, 2)[1:]
            naive.append(np.nanmean(c))
        assert s["mean"] == pytest.approx(np.mean(naive), abs=1e-14)


def test_sign_agreement_gets_a_ci_from_the_resampled_counts(counts_source, fixed_source):
    ev = _evaluate([counts_source, fixed_source])
    ag = ev.sign_agreement.set_index("direction")
    assert list(ag["source_a"]) == [counts_source.name] * 2
    rec = ag.loc[T2A]
    # T->A: y and z agree (he, she) in both; x: counts say he, the fixed table she -> 4 of 6
    assert rec["agreement"] == pytest.approx(4 / 6) and rec["n_cells"] == 6
    assert rec["ci_low"] <= rec["agreement"] <= rec["ci_high"] and rec["ci_high"] == 1.0
    fixed_only = _evaluate([counts_source, fixed_source], base_uncertainty="none")
    r2 = fixed_only.sign_agreement.set_index("direction").loc[T2A]
    assert r2["ci_low"] == r2["ci_high"] == r2["agreement"]


def test_results_and_reports_keep_the_new_fields(counts_source, fixed_source, tmp_path, provenance):
    ev = _evaluate([counts_source, fixed_source], min_base_count=5)
    res = ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=None,
        audit=pd.DataFrame(),
        mass={},
        provenance=provenance(base_rates=ev.base_provenance, bootstrap=ev.bootstrap),
        config={},
        sign_agreement=ev.sign_agreement,
    )
    back = ProbeResult.load(res.save(tmp_path / "r"), tables=False)
    pd.testing.assert_frame_equal(back.summary, res.summary, check_dtype=False)
    pd.testing.assert_frame_equal(back.by_pair, res.by_pair, check_dtype=False)
    pd.testing.assert_frame_equal(back.sign_agreement, res.sign_agreement, check_dtype=False)
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    assert {r["n_tasks_unsupported"] for r in data["summary"]} == {0, None}
    assert {r["sign_supported"] for r in data["by_pair"]} == {True, None}
    assert data["provenance"]["bootstrap"]["min_base_count"] == 5
    md = report_text(back)
    assert (
        "Tasks with fewer than 5 co-occurrences, left out of the value (--min-base-count): "
        f"{counts_source.name}, A→T: 1 of 3 tasks; {counts_source.name}, T→A: 1 of 3 "
        "tasks."
    ) in md
    assert "counts resampled in every CI" in md and "treated as exact" in md
    assert "Sign agreement of the association between sources" in md
    # x (one sentence) is left out: the sources agree on the 4 cells of y and z
    # the counts resampled and x left out, every resample agrees as well: zero width, n/a
    assert "| 1.00 [n/a] | 4 |" in md
    card = report_text(back, "model-card")
    assert "Tasks with fewer than 5 co-occurrences" in card


def test_unsupported_associations_are_told_in_the_report(counts_source, provenance):
    ev = _evaluate([counts_source])
    res = ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=None,
        audit=pd.DataFrame(),
        mass={},
        provenance=provenance(base_rates=ev.base_provenance, bootstrap=ev.bootstrap),
        config={},
    )
    md = report_text(res)
    assert (
        "Associations not supported by the counts (the sign holds in fewer than 95% of "
        f"the base resamples): {counts_source.name}, A→T: 1 of 3 tasks; "
        f"{counts_source.name}, T→A: 1 of 3 tasks. "
    ) in md
    # the largest contributions mark the cells of x, and only those
    marked = [line for line in md.splitlines() if "(unsupported) |" in line]
    assert marked and all("| x |" in line for line in marked)


@pytest.mark.usefixtures("one_torch_thread")
def test_probe_ci_with_base_resampling(tiny_bert_dir, tmp_path):
    tasks = list(load_tasks("winobias32").words)
    moderate = _counts_file(
        tmp_path / "moderate.csv", tasks, [[80 + 10 * i, 390 - 10 * i] for i in range(len(tasks))]
    )
    args = [
        "-q",
        "probe",
        "--model",
        str(tiny_bert_dir),
        "--max-templates",
        "6",
        "--n-resamples",
        "2000",
        "--seed",
        "1",
        "--format",
        "md",
        "--base-rates",
        f"labor-2016,wikitext103-valtest,{moderate}",
    ]
    assert main([*args, "--out", str(tmp_path / "both")]) == 0
    assert main([*args, "--base-uncertainty", "none", "--out", str(tmp_path / "fixed")]) == 0
    both = ProbeResult.load(tmp_path / "both", tables=False).summary
    fixed = ProbeResult.load(tmp_path / "fixed", tables=False).summary
    assert len(both) == 6
    for b, f in zip(both.itertuples(), fixed.itertuples()):
        assert (b.base_rates, b.direction, b.mean) == (f.base_rates, f.direction, f.mean)
        assert b.base_resampled == (b.base_rates != "labor-2016")
        width, fixed_width = b.ci_high - b.ci_low, f.ci_high - f.ci_low
        if b.base_rates == "labor-2016":  # labor statistics are fixed: the same interval
            assert (b.ci_low, b.ci_high) == (f.ci_low, f.ci_high) and pd.isna(b.base_bias)
        elif b.base_rates == moderate:  # 470 sentences per task: nearly unbiased
            assert abs(b.base_bias) < 0.1 * width
            if b.direction == T2A:  # the counts' error on P(he | task) widens the CI
                assert b.ci_low < f.ci_low < f.ci_high < b.ci_high
                assert width > 1.5 * fixed_width
            else:  # P(task | he) from 15,000 sentences: next to no added error
                assert abs(b.ci_low - f.ci_low) < 0.05 * fixed_width
                assert abs(b.ci_high - f.ci_high) < 0.05 * fixed_width
        else:  # 97 sentences in all: the base's own error dominates and biases the value
            assert width > 1.5 * fixed_width and b.base_bias < -0.1 * width
    md = (tmp_path / "both" / "report.md").read_text()
    (shifted,) = [
        line
        for line in md.splitlines()
        if line.startswith("- Values shifted by the sampling error of the counts")
    ]
    wiki = both[(both["base_rates"] == "wikitext103-valtest") & (both["direction"] == T2A)]
    assert f"wikitext103-valtest, T→A: {wiki['base_bias'].iloc[0]:+.4f}" in shifted
    assert moderate not in shifted


def test_resample_tasks_end_to_end(tiny_bert_dir, tmp_path, one_torch_thread):
    """``biasamp probe --resample tasks``: the flag reaches the bootstrap and the provenance,
    and the saved tables, evaluated again with the public evaluate_tables, give the same
    values and CIs; the task bootstrap's CIs are not the template bootstrap's."""
    from biasamp.cli import main
    from biasamp.pipeline.compare import model_tables
    from biasamp.results import ProbeResult

    runs = {}
    for units in ("tasks", "templates"):
        out = tmp_path / units
        assert (
            main(
                [
                    "-q",
                    "probe",
                    "--model",
                    str(tiny_bert_dir),
                    "--max-templates",
                    "4",
                    "--n-resamples",
                    "300",
                    "--seed",
                    "3",
                    "--resample",
                    units,
                    "--base-rates",
                    "uniform,labor-2016",
                    "--format",
                    "json",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        runs[units] = ProbeResult.load(out)
    res = runs["tasks"]
    assert res.provenance.bootstrap.resample == "tasks"
    assert "over tasks (occupations)" in res.provenance.bootstrap.method
    assert set(res.summary["resample"]) == {"tasks"}
    tpl = list(res.provenance.templates.template_ids)
    tasks, attrs = list(res.provenance.tasks.words), list(res.provenance.attributes)
    tables = [
        model_tables(res, d, template_ids=tpl, tasks=tasks, attributes=attrs)
        for d in ("attribute_to_task", "task_to_attribute")
    ]
    again = evaluate_tables(
        *tables,
        tasks,
        attrs,
        ["uniform", "labor-2016"],
        template_ids=tpl,
        n_resamples=300,
        seed=3,
        resample="tasks",
    ).summary
    for col in ("mean", "std", "ci_low", "ci_high"):
        np.testing.assert_allclose(again[col], res.summary[col], rtol=0, atol=1e-12)
    other = runs["templates"].summary
    np.testing.assert_allclose(other["mean"], res.summary["mean"], rtol=0, atol=1e-12)
    assert not np.allclose(other["ci_low"], res.summary["ci_low"])
