"""Bound templates in the pipeline: pooled tables (hand-computed values), the bootstrap
stratified by task against a naive loop, groups, the results schema, and probes end to end
on a tiny model (per-attribute contexts against a naive computation)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError, ProbeResult, evaluate_tables
from biasamp.cli import main
from biasamp.metrics import directional_bias_amplification, resample_indices

TASKS, ATTRS = ["a", "b", "c"], ["he", "she"]
JOINT = [[30.0, 10.0], [10.0, 30.0], [20.0, 20.0]]
N = np.nan
EPS = np.finfo(float).eps  # one ulp at 1.0
# T->A: templates 0, 1 bound to a, 2 to b, 3 crossed (NaN where a template does not cover)
TA = np.array(
    [
        [[0.8, 0.2], [N, N], [N, N]],
        [[0.6, 0.4], [N, N], [N, N]],
        [[N, N], [0.3, 0.7], [N, N]],
        [[0.5, 0.5], [0.4, 0.6], [0.9, 0.1]],
    ]
)
BOUND = [["a"], ["a"], ["b"], []]


class Fixed:
    name = "fixed"

    def table(self, tasks, attributes, *, direction=None):
        from biasamp.base_rates import BaseRateTable

        return BaseRateTable(
            pd.DataFrame(JOINT, index=tasks, columns=attributes), provenance={"name": "fixed"}
        )


def _at(seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([rng.dirichlet(np.ones(3), size=2).T for _ in range(4)])  # columns sum to 1


def _evaluate(**kw):
    kw.setdefault("n_resamples", 400)
    return evaluate_tables(
        _at(), TA, TASKS, ATTRS, [Fixed()], template_ids=list("wxyz"), template_tasks=BOUND, **kw
    )


def test_pooled_values_by_hand():
    ev = _evaluate()
    s = ev.summary.set_index("direction")
    assert set(s["aggregation"]) == {"pooled"}
    # T->A: P(A|T=a) = mean(.8, .6, .5) = .6333, b = mean(.3, .4) = .35, c = .9;
    # p_base a=[.75,.25] b=[.25,.75] c=[.5,.5]; signs a=(+,-) b=(-,+) c=(0,0);
    # contributions a: -.11667 twice, b: -.1 twice, c: 0 twice -> -0.43333 / 6
    assert s.loc["task_to_attribute", "mean"] == pytest.approx(-0.4333333333333 / 6, abs=1e-12)
    pooled = np.array([[1.9 / 3, 1.1 / 3], [0.35, 0.65], [0.9, 0.1]])
    ref = directional_bias_amplification(pooled, JOINT, direction="T->A")
    # the pipeline pools the table and sums the contributions in its own order, the reference
    # in the metric's: the same formula, rounded differently by a few ulps (1 ulp was seen)
    assert s.loc["task_to_attribute", "mean"] == pytest.approx(ref.value, rel=4 * EPS, abs=0)
    assert np.isnan(s.loc["task_to_attribute", "std"])
    assert s.loc["task_to_attribute", "per_template"] == []
    assert s.loc["task_to_attribute", "n_templates"] == 4
    # A->T: the pooled table is the mean over templates, its value the mean of theirs
    at = _at()
    ref = directional_bias_amplification(at.mean(axis=0), JOINT, direction="A->T")
    per = [directional_bias_amplification(t, JOINT, direction="A->T").value for t in at]
    assert s.loc["attribute_to_task", "mean"] == pytest.approx(ref.value, rel=4 * EPS, abs=0)
    assert s.loc["attribute_to_task", "mean"] == pytest.approx(np.mean(per), abs=1e-14)
    np.testing.assert_allclose(s.loc["attribute_to_task", "per_template"], per, atol=1e-14)
    assert s.loc["attribute_to_task", "std"] == pytest.approx(np.std(per), abs=1e-14)
    bp = ev.by_pair[ev.by_pair["direction"] == "task_to_attribute"]
    np.testing.assert_allclose(bp["p_model"], pooled.ravel(), atol=1e-15)
    assert list(bp["n_templates"]) == [3, 3, 2, 2, 1, 1]
    assert bp["p_model_std"].iloc[0] == pytest.approx(np.std([0.8, 0.6, 0.5]), abs=1e-15)
    per_t = ev.per_template[ev.per_template["direction"] == "task_to_attribute"]
    assert per_t["value"].isna().all() and list(per_t["template_id"]) == list("wxyz")


def _naive_ci(direction, n_resamples=400, seed=0):
    """Every resample: the units drawn within their strata, the pooled table rebuilt, the
    metric recomputed."""
    if direction == "T->A":
        kk, tt = np.nonzero(~np.isnan(TA[:, :, 0]))
        strata = list(tt)
    else:
        kk, strata = np.arange(4), ["a", "a", "b", "*"]
    at = _at()
    stats = []
    for block in resample_indices(len(kk), n_resamples=n_resamples, seed=seed, strata=strata):
        for row in block:
            if direction == "T->A":
                m = np.zeros((3, 2))
                n = np.zeros(3)
                for u in row:
                    m[tt[u]] += TA[kk[u], tt[u]]
                    n[tt[u]] += 1
                m /= n[:, None]
            else:
                m = at[kk[row]].mean(axis=0)
            stats.append(directional_bias_amplification(m, JOINT, direction=direction).value)
    return np.percentile(stats, [2.5, 97.5])


@pytest.mark.parametrize("direction", ["T->A", "A->T"])
def test_stratified_ci_equals_the_naive_loop(direction):
    s = _evaluate().summary
    row = s[
        s["direction"] == ("task_to_attribute" if direction == "T->A" else "attribute_to_task")
    ].iloc[0]
    lo, hi = _naive_ci(direction)
    assert (row["ci_low"], row["ci_high"]) == (
        pytest.approx(lo, abs=1e-12),
        pytest.approx(hi, abs=1e-12),
    )
    assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def test_groups_by_hand():
    ev = _evaluate(template_groups=[["g1"], ["g1", "g2"], ["g2"], []], group_labels=["g2", "g1"])
    g = ev.by_group[ev.by_group["direction"] == "task_to_attribute"].set_index("group")
    assert list(g.index) == ["g2", "g1"]
    # g1 = templates 0, 1: task a only, P = (.7, .3), contributions -.05, -.05 over 2 cells
    assert g.loc["g1", "mean"] == pytest.approx(-0.05, abs=1e-14)
    assert (g.loc["g1", "n_templates"], g.loc["g1", "n_tasks"]) == (2, 1)
    # g2 = templates 1 (a: .6,.4) and 2 (b: .3,.7): -.15 -.15 -.05 -.05 over 4 cells
    assert g.loc["g2", "mean"] == pytest.approx(-0.1, abs=1e-14)
    assert (g.loc["g2", "n_templates"], g.loc["g2", "n_tasks"]) == (2, 2)
    # one template per task: nothing to resample, the interval is the value
    assert g.loc["g2", "ci_low"] == pytest.approx(-0.1) == g.loc["g2", "ci_high"]
    a = ev.by_group[ev.by_group["direction"] == "attribute_to_task"].set_index("group")
    per = ev.summary.set_index("direction").loc["attribute_to_task", "per_template"]
    assert a.loc["g2", "mean"] == pytest.approx(np.mean(per[1:3]), abs=1e-14)


def test_crossed_sets_keep_their_numbers_and_get_groups():
    at = _at()
    ta = np.where(np.isnan(TA), 0.5, TA)
    plain = evaluate_tables(at, ta, TASKS, ATTRS, [Fixed()], n_resamples=300)
    same = evaluate_tables(
        at,
        ta,
        TASKS,
        ATTRS,
        [Fixed()],
        n_resamples=300,
        template_tasks=[[], [], [], ["a", "b", "c"]],
        template_groups=[["x"], ["x"], [], ["y"]],
    )
    pd.testing.assert_frame_equal(plain.summary, same.summary)
    pd.testing.assert_frame_equal(plain.by_pair, same.by_pair)
    assert set(plain.summary["aggregation"]) == {"templates"} and plain.by_group.empty
    g = same.by_group.set_index(["direction", "group"])
    per = plain.summary.set_index("direction").loc["task_to_attribute", "per_template"]
    from biasamp.metrics import bootstrap_ci

    assert g.loc[("task_to_attribute", "x"), "mean"] == pytest.approx(np.mean(per[:2]))
    lo, _ = bootstrap_ci(per[:2], n_resamples=300, seed=0)
    assert g.loc[("task_to_attribute", "x"), "ci_low"] == lo
    assert g.loc[("task_to_attribute", "y"), "n_templates"] == 1


@pytest.mark.parametrize(
    "kw, pattern",
    [
        (
            {"template_tasks": BOUND[:3]},
            r"template_tasks must have one entry per template \(4\); got 3",
        ),
        ({"template_tasks": [["a"], ["z"], ["b"], []]}, r"template_tasks\[1\] names tasks \['z'\]"),
        (
            {"template_tasks": [["a"], ["a"], ["b"], ["b"]]},
            r"tasks \['c'\] are covered by no template",
        ),
        (
            {"template_tasks": BOUND, "template_groups": [["g"]]},
            r"template_groups must have one entry per template \(4\); got 1",
        ),
    ],
)
def test_evaluate_errors(kw, pattern):
    with pytest.raises(BiasampError, match=pattern):
        evaluate_tables(_at(), TA, TASKS, ATTRS, [Fixed()], n_resamples=10, **kw)


# ---------------------------------------------------------------------------------------
# results.json schema 4
# ---------------------------------------------------------------------------------------


def test_schema_4_round_trip_and_version_1_refused(golden_result, tmp_path, provenance):
    ev = _evaluate(template_groups=[["g1"], ["g1"], ["g2"], []])
    res = ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=None,
        audit=pd.DataFrame(),
        mass={},
        provenance=provenance(),
        config={},
        by_group=ev.by_group,
    )
    d = res.save(tmp_path / "r")
    assert (d / "by_group.csv").is_file()
    data = json.loads((d / "results.json").read_text())
    assert data["schema_version"] == 4 and len(data["by_group"]) == 4
    back = ProbeResult.load(d, tables=False)
    pd.testing.assert_frame_equal(back.by_group, ev.by_group, check_dtype=False)
    assert list(back.summary["aggregation"]) == ["pooled", "pooled"]
    # a version 1 file (biasamp before pooled values) is refused, not misread
    v1 = golden_result.to_json_dict()
    v1.update(schema_version=1, complete=True, data_sha256={})
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "results.json").write_text(json.dumps(v1))
    with pytest.raises(
        BiasampError,
        match=r"schema_version 1 is not supported \(this biasamp "
        r"reads 4\)",
    ):
        ProbeResult.load(tmp_path / "v1", tables=False)
    for bad, pattern in (
        (
            dict(v1, schema_version=5),
            r"schema_version 5 is not supported "
            r"\(this biasamp reads 4\)",
        ),
        ({**data, "by_group": "x"}, r"by_group must be a list; got 'x'"),
        ({k: v for k, v in data.items() if k != "by_group"}, r"lacks the keys \['by_group'\]"),
    ):
        (tmp_path / "v1" / "results.json").write_text(json.dumps(bad))
        with pytest.raises(BiasampError, match=pattern):
            ProbeResult.load(tmp_path / "v1", tables=False)
    data["summary"][0]["aggregation"] = "median"
    (tmp_path / "v1" / "results.json").write_text(json.dumps(data))
    with pytest.raises(
        BiasampError,
        match=r"aggregation must be one of 'templates', "
        r"'pooled'; got 'median'",
    ):
        ProbeResult.load(tmp_path / "v1", tables=False)


# ---------------------------------------------------------------------------------------
# probes end to end on a tiny model
# ---------------------------------------------------------------------------------------

SET = """[set]
name = "mini"
description = "bound, crossed and per-attribute templates"
source = "test"
year = 2024
license = "MIT"
agreement = true

[set.groups]
own = "bound to their task"

[[template]]
id = "nurse-1"
text = "The {task} said that {attribute} {was} tired."
task = "nurse"
groups = ["own"]

[[template]]
id = "cook-2"
text = "The {task} told the driver that {attribute} needed {attribute_possessive} knife."
task = "cook"
groups = ["own"]
context = "per-attribute"
mask = { task_to_attribute = ["attribute"] }

[[template]]
id = "all"
text = "{Attribute} {be} a good {task}."
"""


@pytest.fixture(scope="module")
def mini_run(tiny_bench_bert_dir, tmp_path_factory, one_torch_thread):
    d = tmp_path_factory.mktemp("mini")
    (d / "mini.toml").write_text(SET)
    out = d / "out"
    rc = main(
        [
            "-q",
            "probe",
            "--model",
            str(tiny_bench_bert_dir),
            "--templates",
            str(d / "mini.toml"),
            "--tasks",
            "nurse,cook,driver",
            "--attributes",
            "he,she,they",
            "--base-rates",
            "uniform",
            "--n-resamples",
            "300",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return out


def test_per_attribute_context_equals_a_naive_computation(mini_run, tiny_bench_bert_dir):
    from biasamp.scoring import MaskedLMScorer

    tables = pd.read_csv(mini_run / "tables.csv")
    ta = tables[tables["direction"] == "task_to_attribute"]
    # only the cells a template covers: nurse-1 (nurse), cook-2 (cook), all (3 tasks)
    assert sorted(set(zip(ta["template_id"], ta["task"]))) == [
        ("all", "cook"),
        ("all", "driver"),
        ("all", "nurse"),
        ("cook-2", "cook"),
        ("nurse-1", "nurse"),
    ]
    scorer = MaskedLMScorer(tiny_bench_bert_dir, device="cpu")
    lp = [
        scorer.score(
            [f"The cook told the driver that [BLANK] needed {poss} knife."], [a], scoring="word"
        ).log_prob[0, 0]
        for a, poss in (("he", "his"), ("she", "her"), ("they", "their"))
    ]
    expected = np.exp(lp) / np.exp(lp).sum()
    got = ta[ta["template_id"] == "cook-2"].set_index("attribute")["prob"]
    np.testing.assert_allclose(got[["he", "she", "they"]], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        ta[ta["template_id"] == "cook-2"].set_index("attribute")["log_prob"][["he", "she", "they"]],
        lp,
        rtol=1e-9,
    )


def test_results_follow_from_the_tables(mini_run):
    data = json.loads((mini_run / "results.json").read_text())
    assert {r["aggregation"] for r in data["summary"]} == {"pooled"}
    assert [r["group"] for r in data["by_group"]] == ["own", "own"]
    prov = data["provenance"]
    assert "stratified by task" in prov["bootstrap"]["method"]
    assert prov["templates"]["groups"] == {"own": "bound to their task"}
    tables = pd.read_csv(mini_run / "tables.csv")
    tasks, attrs, ids = (
        ["nurse", "cook", "driver"],
        ["he", "she", "they"],
        ["nurse-1", "cook-2", "all"],
    )
    arr = {}
    for d, g in tables.groupby("direction"):
        p = g.set_index(["template_id", "task", "attribute"])["prob"]
        arr[d] = np.array([[[p.get((k, t, a), np.nan) for a in attrs] for t in tasks] for k in ids])
    from biasamp.base_rates import get_source

    ev = evaluate_tables(
        arr["attribute_to_task"],
        arr["task_to_attribute"],
        tasks,
        attrs,
        [get_source("uniform")],
        template_ids=ids,
        template_tasks=[["nurse"], ["cook"], []],
        n_resamples=300,
        seed=0,
    )
    for rec, (_, row) in zip(data["summary"], ev.summary.iterrows()):
        assert rec["mean"] == pytest.approx(row["mean"], abs=1e-12)
        assert rec["ci_low"] == pytest.approx(row["ci_low"], abs=1e-12)
    report = (mini_run / "report.md").read_text()
    assert "## Groups of templates" in report and "`own`: bound to their task" in report
    assert "resamples templates within each task" in report


def test_probe_on_the_shipped_bound_sets(tiny_bench_bert_dir, tmp_path, capsys, one_torch_thread):
    out = tmp_path / "wg"
    assert (
        main(
            [
                "probe",
                "--model",
                str(tiny_bench_bert_dir),
                "--templates",
                "winogender",
                "--max-templates",
                "1",
                "--base-rates",
                "uniform:bergsma,bergsma",
                "--n-resamples",
                "200",
                "--format",
                "md",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "group referent-" in text
    data = json.loads((out / "results.json").read_text())
    # the set's own 60 tasks, one template each (--max-templates counts per task)
    assert data["provenance"]["tasks"]["name"] == "winogender:tasks"
    assert len(data["provenance"]["tasks"]["words"]) == 60
    assert all(r["n_templates"] == 60 for r in data["summary"])
    # WinoBias probed with the paper's 32-word vocabulary: its spellings meet through aliases
    out = tmp_path / "wb"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny_bench_bert_dir),
                "--templates",
                "winobias",
                "--tasks",
                "winobias32",
                "--max-templates",
                "1",
                "--base-rates",
                "labor-2016",
                "--n-resamples",
                "100",
                "--format",
                "md",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads((out / "results.json").read_text())
    assert len(data["provenance"]["tasks"]["words"]) == 32
    groups = {r["group"] for r in data["by_group"]}
    assert groups <= {"type1", "type2", "pro", "anti", "dev", "test"} and "pro" in groups
    t = pd.read_csv(out / "tables.csv")
    assert {"constructor", "sewer"} <= set(t["task"])
