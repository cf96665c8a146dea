"""biasamp probe on causal (decoder-only) LMs end to end, the model-type/estimator checks made
before any weights are loaded, and the loading options (score cache, HF cache, missing weights)
through the CLI and ProbeConfig."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

import tiny_models as tm
from biasamp import BiasampError
from biasamp.cli import main
from biasamp.pipeline import ProbeConfig, probe_many

FILES = (
    "results.json",
    "by_pair.csv",
    "per_template.csv",
    "tables.csv",
    "report.md",
    "report.html",
    "report.json",
    "model_card.md",
    "fig5_p_attribute_given_task.png",
    "forest_delta.png",
    "base_rate_panel.png",
)
QUICK = [
    "--templates",
    "adjectives",
    "--max-templates",
    "2",
    "--base-rates",
    "uniform,labor-2016",
    "--n-resamples",
    "100",
]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _probe(tmp_path, name, *args):
    out = tmp_path / name
    return main(["-q", "probe", *args, *QUICK, "--out", str(out)]), out


@pytest.fixture(scope="module")
def probed(tiny_gpt2_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("causal") / "gpt2"
    rc = main(
        [
            "-q",
            "probe",
            "--model",
            str(tiny_gpt2_dir),
            *QUICK,
            "--format",
            "md,html,json,model-card",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return out


def test_probe_causal_writes_every_file_and_records_type_and_estimator(probed, tiny_gpt2_dir):
    for name in FILES:
        assert (probed / name).is_file(), name
    data = json.loads((probed / "results.json").read_text())
    prov = data["provenance"]
    assert (prov["model"]["model_type"], prov["scorer"]["estimator"]) == ("causal", "continuation")
    assert prov["model"]["model_class"] == "GPT2LMHeadModel"
    assert prov["scorer"]["context"]["token"] == "<|endoftext|>"
    assert set(prov["model"]["weights_sha256"]) == {"model.safetensors"}
    assert (data["config"]["model_type"], data["config"]["scoring"]) == ("causal", "continuation")
    report = (probed / "report.md").read_text()
    assert "model type: causal LM; estimator (scoring): `continuation`" in report
    assert "model type: causal LM" in (probed / "report.html").read_text()
    report_json = json.loads((probed / "report.json").read_text())
    assert report_json["provenance"]["model"]["model_type"] == "causal"


def test_probe_causal_tables_are_the_scorers_probabilities(probed, tiny_gpt2_dir):
    from biasamp.scoring import CausalLMScorer
    from biasamp.templates import build_prompts

    tables = pd.read_csv(probed / "tables.csv")
    for d, g in tables.groupby("direction"):
        sums = g.groupby(["template_id", "attribute" if d == "attribute_to_task" else "task"])
        np.testing.assert_allclose(sums["prob"].sum(), 1.0, atol=1e-12)
    prompts = build_prompts("adjectives", "he,she", "winobias32", direction="T->A").head(3)
    s = CausalLMScorer(tiny_gpt2_dir, device="cpu")
    for row in prompts.itertuples():
        r = s.score([row.prompt], list(row.candidates))
        got = tables[
            (tables.direction == "task_to_attribute")
            & (tables.task == row.task)
            & (tables.template_id == row.template_id)
        ]
        np.testing.assert_allclose(
            got.set_index("attribute").loc[["he", "she"], "prob"], r.prob[0], atol=1e-6
        )  # other batches: float32 rounding


def test_sentence_and_continuation_give_the_same_biasamp(probed, tiny_gpt2_dir, tmp_path):
    rc, out = _probe(
        tmp_path, "sent", "--model", str(tiny_gpt2_dir), "--scoring", "sentence", "--format", "json"
    )
    assert rc == 0
    a = json.loads((probed / "results.json").read_text())
    b = json.loads((out / "results.json").read_text())
    assert b["provenance"]["scorer"]["estimator"] == "sentence"
    # log P(prefix) cancels in the renormalisation; only float32 rounding differs (it is
    # computed once per shared prefix, in other batches)
    for ra, rb in zip(a["summary"], b["summary"]):
        assert rb["mean"] == pytest.approx(ra["mean"], abs=1e-6)
        np.testing.assert_allclose(rb["per_template"], ra["per_template"], atol=1e-6)


def test_masked_and_causal_models_in_one_run(tiny_bert_dir, tiny_gpt2_dir, tmp_path):
    res = probe_many(
        models=[str(tiny_bert_dir), str(tiny_gpt2_dir)],
        max_templates=1,
        base_rates=["uniform"],
        n_resamples=50,
        out=str(tmp_path / "both"),
        formats=["md"],
    )
    assert [(r.provenance.model.model_type, r.provenance.scorer.estimator) for r in res] == [
        ("masked", "word"),
        ("causal", "continuation"),
    ]
    assert (tmp_path / "both" / "comparison.md").is_file()


# ----------------------------------------------------------------------------- checked early
@pytest.fixture
def no_weights(monkeypatch):
    """Fail the test if any model's weights are loaded."""
    import biasamp.scoring._base as base

    def refuse(*args, **kwargs):
        raise AssertionError("weights were loaded")

    monkeypatch.setattr(base, "load_model", refuse)


@pytest.mark.parametrize(
    "model, args, match",
    [
        (
            "bert",
            ["--model-type", "causal"],
            r"model_type 'causal' does not fit model '.*tiny-bert': it is a masked language model "
            r"\(config.json architectures \['BertForMaskedLM'\]\); use model_type 'masked' or 'auto'",
        ),
        ("gpt2", ["--model-type", "masked"], r"it is a causal language model"),
        (
            "gpt2",
            ["--scoring", "word"],
            r"scoring 'word' is an estimator for masked language models, but model '.*tiny-gpt2' is a "
            r"causal language model; valid: 'continuation', 'sentence'",
        ),
        (
            "bert",
            ["--scoring", "sentence"],
            r"scoring 'sentence' is an estimator for causal language models, but model '.*tiny-bert' "
            r"is a masked language model; valid: 'word', 'first-piece', 'pll'",
        ),
        (
            "gpt2",
            ["--compat", "wang2021"],
            r"compat 'wang2021' reproduces the paper's masked-LM procedure \(FitBERT first-piece "
            r"scoring\); model '.*tiny-gpt2' is a causal language model",
        ),
        (
            "gpt2",
            ["--model-type", "causal", "--compat", "wang2021"],
            r"compat 'wang2021' .* cannot be used with model_type 'causal'",
        ),
        (
            "gpt2",
            ["--model-type", "causal", "--scoring", "pll"],
            r"scoring 'pll' is an estimator for masked language models, but model_type is 'causal'; "
            r"valid: 'continuation', 'sentence'",
        ),
        (
            "gpt2",
            ["--model-type", "decoder"],
            r"--model-type must be one of 'auto', 'masked', 'causal'; got 'decoder'",
        ),
    ],
)
def test_bad_type_or_estimator_exit_2_before_loading(
    model, args, match, tiny_bert_dir, tiny_gpt2_dir, tmp_path, capsys, no_weights
):
    import re

    path = {"bert": tiny_bert_dir, "gpt2": tiny_gpt2_dir}[model]
    rc, out = _probe(tmp_path, "o", "--model", str(path), *args)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert re.search(match, err), err
    assert not out.exists()


def test_config_cache_options():
    with pytest.raises(
        BiasampError,
        match=r"unknown config option 'cache-dir' \(did you mean "
        r"'hf_cache_dir'\?\); allowed: models, ",
    ):
        ProbeConfig.from_dict({"model": "m", "cache-dir": "x"})
    cfg = ProbeConfig.from_dict(
        {
            "model": "m",
            "score-cache": "s",
            "hf_cache_dir": "h",
            "allow_missing_weights": True,
            "model-type": "causal",
        }
    )
    assert (
        cfg.score_cache,
        cfg.hf_cache_dir,
        cfg.allow_missing_weights,
        cfg.model_type,
        cfg.scoring,
    ) == ("s", "h", True, "causal", None)
    with pytest.raises(BiasampError, match=r"allow_missing_weights must be"):
        ProbeConfig(models=["m"], allow_missing_weights="yes")


# ----------------------------------------------------------------------------- loading options
def test_allow_missing_weights_puts_a_warning_at_the_top_of_the_report(tmp_path, capsys):
    body = tm.make_tiny_llama(tmp_path / "llama-body", head=False)
    rc, out = _probe(tmp_path, "refused", "--model", str(body))
    err = capsys.readouterr().err
    assert rc == 2 and "no weights for lm_head.weight of LlamaForCausalLM" in err
    assert "--allow-missing-weights" in err and not out.exists()
    rc, out = _probe(
        tmp_path,
        "allowed",
        "--model",
        str(body),
        "--allow-missing-weights",
        "--format",
        "md,html,model-card",
    )
    assert rc == 0
    head = (out / "report.md").read_text().splitlines()[:4]
    assert head[0].startswith("# BiasAmp→ report")
    assert head[2].startswith(
        "> WARNING: 1 weight(s) of this model were missing from its "
        "checkpoint and initialised at random (--allow-missing-weights): "
        "lm_head.weight."
    )
    assert "WARNING: 1 weight(s)" in (out / "model_card.md").read_text()
    assert "WARNING: 1 weight(s)" in (out / "report.html").read_text()
    prov = json.loads((out / "results.json").read_text())["provenance"]
    assert prov["model"]["missing_weights"] == ["lm_head.weight"]


def test_score_cache_and_hf_cache_dir_reach_the_scorer(tiny_gpt2_dir, tmp_path, monkeypatch):
    from huggingface_hub import constants

    tm.fill_hub_cache(tiny_gpt2_dir, tmp_path / "hf", "org/tiny-gpt2")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    rc, out = _probe(
        tmp_path,
        "hub",
        "--model",
        "org/tiny-gpt2",
        "--hf-cache-dir",
        str(tmp_path / "hf"),
        "--score-cache",
        str(tmp_path / "scores"),
        "--format",
        "json,md",
    )
    assert rc == 0
    assert len(list((tmp_path / "scores").glob("scores-*.sqlite"))) == 1
    prov = json.loads((out / "results.json").read_text())["provenance"]
    assert prov["model"]["commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert (
        "model: `org/tiny-gpt2` (revision: `default`, commit "
        "`0123456789abcdef0123456789abcdef01234567`)"
    ) in (out / "report.md").read_text()
    assert prov["model"]["name"] == "org/tiny-gpt2" and prov["model"]["model_type"] == "causal"
    assert Path(out / "results.json").is_file()


def test_a_probe_resolves_each_model_once(tiny_gpt2_dir, tiny_bert_dir, tmp_path, monkeypatch):
    """The model id checked, the hub (or folder) resolved and config.json read once per model
    (they were 3, 2 and 2 times)."""
    import biasamp.scoring._hub as H
    import biasamp.scoring._load as L

    calls = {"check_model": 0, "resolve_source": 0, "detect_model_type": 0}

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counted(H, "check_model")
    for module in (H, L):  # wherever it is looked up
        counted(module, "resolve_source")
    counted(H, "detect_model_type")
    models = [str(tiny_gpt2_dir), str(tiny_bert_dir)]
    probe_many(
        models=models, templates="wang2021", max_templates=2, n_resamples=20, base_rates=["uniform"]
    )
    assert calls == {"check_model": 2, "resolve_source": 2, "detect_model_type": 2}
