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
ARGS = ["--max-templates", "4", "--n-resamples", "400", "--seed", "2", "--format", "md",
        "--base-rates", "uniform,labor-2016,wikitext103-valtest"]


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
        other = b.summary.set_index(["base_rates", "direction"]).loc[(rec.base_rates,
                                                                     rec.direction)]
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
