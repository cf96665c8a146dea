"""The model card's ``model-index`` front matter, read back with huggingface_hub's own parser
(offline): what the hub shows is what biasamp measured."""

from __future__ import annotations

import dataclasses

import pytest

from biasamp.report import build_report, report_text

hub = pytest.importorskip("huggingface_hub")

# the golden result's summary (conftest): A->T per template [-9/520, 0], T->A [1/80, 0]
EXPECTED = {"biasamp_a2t": -9 / 1040, "biasamp_t2a": 1 / 160}


def _card(result):
    return report_text(result, "model-card", plots={"fig5": "fig5.png"})


def test_the_front_matter_parses_with_huggingface_hub(golden_result):
    card = hub.ModelCard(_card(golden_result), ignore_metadata_errors=False)
    name, results = hub.repocard_data.model_index_to_eval_results(
        card.data.to_dict()["model-index"]
    )
    assert name == "golden-model" and card.data.model_name == "golden-model"
    assert sorted(r.metric_type for r in results) == ["biasamp_a2t", "biasamp_t2a"]
    for r in results:
        assert r.metric_value == pytest.approx(EXPECTED[r.metric_type], rel=1e-12, abs=0)
        assert r.task_type == "fill-mask"  # the golden model is a masked LM
        assert (r.dataset_type, r.dataset_name) == ("biasamp/x", "biasamp templates x")
        assert r.metric_config == "golden"
        assert r.metric_name in ("BiasAmp→ T→A (golden)", "BiasAmp→ A→T (golden)")
        assert r.source_name == "biasamp 0.1.0" and r.source_url.startswith("https://")
        assert r.metric_args["ci_low"] <= r.metric_value <= r.metric_args["ci_high"]
    # the hub's own writer gives the same index back
    again = hub.repocard_data.eval_results_to_model_index(name, results)
    assert again == card.data.to_dict()["model-index"]


def test_the_written_file_loads_with_metadata_load(golden_result, tmp_path):
    folder = golden_result.save(tmp_path / "res")
    build_report(folder, formats=["model-card"], plots=False)
    meta = hub.metadata_load(folder / "model_card.md")
    _, results = hub.repocard_data.model_index_to_eval_results(meta["model-index"])
    got = {r.metric_type: r.metric_value for r in results}
    assert got == pytest.approx(EXPECTED, rel=1e-12, abs=0)
    # metadata_update's path: card data built from the metadata, written and read again
    data = hub.ModelCardData(**meta)
    assert "model-index" in data.to_yaml() and len(data.eval_results) == 2


def test_an_undefined_value_is_left_out_of_the_index(golden_result):
    summary = golden_result.summary.copy()
    summary.loc[summary["direction"] == "attribute_to_task", "mean"] = float("nan")
    card = hub.ModelCard(_card(dataclasses.replace(golden_result, summary=summary)))
    assert [r.metric_type for r in card.data.eval_results] == ["biasamp_t2a"]
