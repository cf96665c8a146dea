"""Paired differences between results (biasamp.pipeline.compare) and their place in compare."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasamp.cli import main
from biasamp.metrics import bootstrap_ci
from biasamp.pipeline import paired_differences
from biasamp.results import ProbeResult

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ARGS = [
    "--max-templates",
    "4",
    "--n-resamples",
    "400",
    "--seed",
    "2",
    "--format",
    "md",
    "--base-rates",
    "uniform,labor-2016,wikitext103-valtest",
]


@pytest.fixture(scope="module")
def runs(tiny_bert_dir, tiny_bert2_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("paired")
    for name, model in (("a", tiny_bert_dir), ("a2", tiny_bert_dir), ("b", tiny_bert2_dir)):
        assert main(["-q", "probe", "--model", str(model), "--out", str(root / name), *ARGS]) == 0
    return root


def test_same_model_twice_differs_by_exactly_zero(runs):
    d = paired_differences([ProbeResult.load(runs / "a"), ProbeResult.load(runs / "a2")])
    assert len(d) == 6
    assert (d["difference"] == 0).all() and (d["ci_low"] == 0).all() and (d["ci_high"] == 0).all()
    assert d["p_sign"].isna().all()


def test_two_models_paired_difference(runs):
    a, b = ProbeResult.load(runs / "a"), ProbeResult.load(runs / "b")
    d = paired_differences([a, b]).set_index(["base_rates", "direction"])
    for rec in a.summary.itertuples():
        other = b.summary.set_index(["base_rates", "direction"]).loc[
            (rec.base_rates, rec.direction)
        ]
        row = d.loc[(rec.base_rates, rec.direction)]
        assert row["difference"] == pytest.approx(rec.mean - other["mean"], abs=1e-12)
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        assert 0 <= row["p_sign"] <= 1
    # a fixed base (labor-2016), templates only: the replicates are the bootstrap of the
    # per-template differences (same seeded draws)
    pa, pb = a.per_template, b.per_template
    key = (pa["base_rates"] == "labor-2016") & (pa["direction"] == "task_to_attribute")
    diffs = pa[key]["value"].to_numpy() - pb[key.to_numpy()]["value"].to_numpy()
    lo, hi = bootstrap_ci(diffs, n_resamples=400, seed=2)
    row = d.loc[("labor-2016", "task_to_attribute")]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)


def test_compare_shows_the_paired_section(runs, tmp_path, capsys):
    assert main(["compare", str(runs / "a"), str(runs / "b"), "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "P(sign holds)" in out
    text = (tmp_path / "c" / "comparison.md").read_text()
    assert "## Paired differences" in text and "## Setup" in text
    paired = pd.read_csv(tmp_path / "c" / "paired_differences.csv")
    assert len(paired) == 6 and np.isfinite(paired["difference"]).all()


BOUND = """[set]
name = "bound-mini"
description = "two templates bound to their task, one crossed"
source = "test"
year = 2024
license = "MIT"
agreement = true

[[template]]
id = "nurse-1"
text = "The {task} said that {attribute} {was} tired."
task = "nurse"

[[template]]
id = "cook-1"
text = "The {task} said that {attribute} {was} here."
task = "cook"

[[template]]
id = "all"
text = "{Attribute} {be} a good {task}."

[[template]]
id = "all-2"
text = "{Attribute} {was} the {task}."
"""


@pytest.fixture(scope="module")
def bound_runs(tiny_bert_dir, tiny_bert2_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("paired-bound")
    (root / "set.toml").write_text(BOUND)
    # nurse rests on 3 sentences, cook and driver on 300: with --min-base-count 10 nurse is
    # left out of the counts' value in both results
    counts = root / "counts-long.csv"
    counts.write_text(
        "task,attribute,count\nnurse,he,1\nnurse,she,2\ncook,he,200\n"
        "cook,she,100\ndriver,he,120\ndriver,she,180\n"
    )
    for name, model in (("a", tiny_bert_dir), ("a2", tiny_bert_dir), ("b", tiny_bert2_dir)):
        assert (
            main(
                [
                    "-q",
                    "probe",
                    "--model",
                    str(model),
                    "--templates",
                    str(root / "set.toml"),
                    "--tasks",
                    "nurse,cook,driver",
                    "--base-rates",
                    f"uniform,file:{counts}",
                    "--min-base-count",
                    "10",
                    "--n-resamples",
                    "300",
                    "--seed",
                    "3",
                    "--format",
                    "md",
                    "--out",
                    str(root / name),
                ]
            )
            == 0
        )
    return root


def test_bound_sets_are_compared_on_their_shared_units(bound_runs):
    a, a2, b = (ProbeResult.load(bound_runs / n) for n in ("a", "a2", "b"))
    assert set(a.summary["aggregation"]) == {"pooled"}
    same = paired_differences([a, a2])
    assert (same["difference"] == 0).all() and (same["ci_low"] == 0).all()
    d = paired_differences([a, b]).set_index(["base_rates", "direction"])
    assert len(d) == 4
    other = b.summary.set_index(["base_rates", "direction"])
    for rec in a.summary.itertuples():
        row = d.loc[(rec.base_rates, rec.direction)]
        # the point of the paired difference is the difference of the two results' values
        # (pooled over each task's own templates, nurse left out of the counts' value)
        assert row["difference"] == pytest.approx(
            rec.mean - other.loc[(rec.base_rates, rec.direction), "mean"], abs=1e-12
        )
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        assert 0 <= row["p_sign"] <= 1
    counts_rows = a.summary[a.summary["base_rates"].str.startswith("file:")]
    assert (counts_rows["n_tasks_excluded"] == 1).all() and counts_rows["base_resampled"].all()


def test_compare_reads_each_folder_once(runs, tmp_path, monkeypatch):
    calls = []
    real = ProbeResult.load.__func__

    def counted(cls, path, **kwargs):
        calls.append(str(path))
        return real(cls, path, **kwargs)

    monkeypatch.setattr(ProbeResult, "load", classmethod(counted))
    dirs = [str(runs / "a"), str(runs / "b")]
    assert main(["-q", "compare", *dirs, "--out", str(tmp_path / "cmp")]) == 0
    assert calls == dirs  # it read each folder three times


def test_a_run_of_two_models_compares_them_in_memory(
    tiny_bert_dir, tiny_bert2_dir, tmp_path, monkeypatch
):
    out = tmp_path / "two"
    monkeypatch.setattr(ProbeResult, "load", None)  # nothing is read back from disk
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                f"{tiny_bert_dir},{tiny_bert2_dir}",
                "--out",
                str(out),
                *ARGS,
            ]
        )
        == 0
    )
    monkeypatch.undo()
    long = pd.read_csv(out / "comparison.csv")
    # the folders beside the comparison, not the staging folder the run wrote them in
    assert sorted(set(long["result_dir"])) == ["tiny-bert", "tiny-bert-2"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["tiny-bert", "tiny-bert-2"]
    back = {d: ProbeResult.load(out / d).summary for d in ("tiny-bert", "tiny-bert-2")}
    for rec in long.itertuples():
        s = (
            back[rec.result_dir]
            .set_index(["base_rates", "direction"])
            .loc[(rec.base_rates, rec.direction)]
        )
        assert rec.mean == pytest.approx(s["mean"], rel=1e-15, abs=0)


def test_the_design_is_recorded_and_read_back_not_guessed(bound_runs):
    """compare reads which template covers which task from the design a result recorded."""
    from biasamp.pipeline.evaluate import Design

    a = ProbeResult.load(bound_runs / "a")
    design = Design.from_dict(a.provenance.design)
    assert design.bound and design.tasks == ("nurse", "cook", "driver")
    assert design.template_ids == a.provenance.templates.template_ids
    assert Design.from_dict(design.to_dict()) == design
    cover, _ = design.coverage()
    assert cover.sum(axis=1).tolist() == [len(t) or 3 for t in design.template_tasks]
