"""``device_map`` / ``max_memory`` / ``offload_folder``: a model placed by accelerate, part of it
on disk, scores as the same model in memory (key/value reuse kept)."""

from __future__ import annotations

import numpy as np
import pytest

import biasamp
from biasamp._errors import BiasampError
from biasamp.scoring import CausalLMScorer, MaskedLMScorer, parse_max_memory

pytest.importorskip("accelerate")

PROMPTS = [
    "The nurse said that [BLANK] was tired.",
    "[BLANK] is a careful driver.",
    "The [BLANK] said that he was late.",
]
#: the tiny GPT-2 holds about 160 kB of float32 weights: 120 kB of CPU leaves the rest on disk
SMALL_CPU = {"cpu": "120KB"}


def test_part_of_the_model_on_disk_scores_as_in_memory(tiny_gpt2_dir, tmp_path):
    whole = CausalLMScorer(tiny_gpt2_dir, device="cpu")
    placed = CausalLMScorer(
        tiny_gpt2_dir,
        device="cpu",
        device_map="auto",
        max_memory=SMALL_CPU,
        offload_folder=tmp_path / "offload",
    )
    where = set(placed.model.hf_device_map.values())
    assert where == {"cpu", "disk"}, placed.model.hf_device_map
    assert placed.share_prefix  # the key/value reuse passed its self-check
    assert placed.provenance["device_map"]["strategy"] == "auto"
    assert set(placed.provenance["device_map"]["modules"]) == {"cpu", "disk"}
    for cands in (["he", "she", "they"], ["nurse", "driver"]):
        a = whole.score(PROMPTS, cands)
        b = placed.score(PROMPTS, cands)
        np.testing.assert_allclose(b.log_prob, a.log_prob, rtol=0, atol=1e-5)
    assert placed.n_forward_calls > 0


def test_a_masked_lm_with_its_encoder_on_disk_scores_as_in_memory(tiny_bert_dir, tmp_path):
    whole = MaskedLMScorer(tiny_bert_dir, device="cpu")
    placed = MaskedLMScorer(
        tiny_bert_dir,
        device="cpu",
        device_map="auto",
        max_memory={"cpu": "80KB"},
        offload_folder=tmp_path / "offload",
    )
    assert set(placed.model.hf_device_map.values()) == {"cpu", "disk"}
    prompts = ["the nurse said that [BLANK] was tired.", "[BLANK] is a careful driver."]
    for scoring in ("word", "first-piece", "pll"):
        a = whole.score(prompts, ["he", "she", "nurse"], scoring=scoring)
        b = placed.score(prompts, ["he", "she", "nurse"], scoring=scoring)
        np.testing.assert_allclose(b.log_prob, a.log_prob, rtol=0, atol=1e-5)


def test_an_offloaded_probe_equals_the_in_memory_one(tiny_gpt2_dir, tmp_path):
    kw = dict(
        model=str(tiny_gpt2_dir),
        templates="wang2021",
        base_rates=["uniform"],
        max_templates=2,
        device="cpu",
        n_resamples=200,
    )
    whole = biasamp.probe(**kw)
    placed = biasamp.probe(
        **kw, device_map="auto", max_memory="cpu=120KB", offload_folder=str(tmp_path / "off")
    )
    assert placed.provenance.scorer.device_map.modules.get("disk", 0) > 0
    np.testing.assert_allclose(placed.summary["mean"], whole.summary["mean"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(placed.summary["ci_low"], whole.summary["ci_low"], rtol=0, atol=1e-6)


def test_placement_options_are_checked_before_loading(tmp_path):
    assert parse_max_memory("0=10GiB, cpu=200MB") == {0: "10GiB", "cpu": "200MB"}
    with pytest.raises(BiasampError, match=r"^max_memory must look like '0=10GiB,cpu=30GiB'"):
        parse_max_memory("lots")
    placing = r"places a model with device_map; give device_map='auto' too$"
    with pytest.raises(BiasampError, match=rf"^max_memory \{{'cpu': '1GB'\}} {placing}"):
        biasamp.ProbeConfig(models=["m"], max_memory="cpu=1GB")
    with pytest.raises(BiasampError, match=rf"^offload_folder '.*' {placing}"):
        biasamp.ProbeConfig(models=["m"], offload_folder=str(tmp_path))
    with pytest.raises(BiasampError, match="device_map"):
        biasamp.ProbeConfig(models=["m"], device_map="everywhere")


def test_the_cli_refuses_a_bad_max_memory(capsys):
    from biasamp.cli import main

    assert main(["probe", "--model", "x", "--device-map", "auto", "--max-memory", "a=b"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-memory must look like" in err[0]  # named by its flag
    assert main(["probe", "--model", "x", "--max-memory", "cpu=1GB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: --max-memory {'cpu': '1GB'} places a model with --device-map; give "
        "--device-map auto too"
    ]


def test_biasamp_score_places_the_model_too(tiny_gpt2_dir, tmp_path, capsys):
    from biasamp.cli import main

    args = [
        "-q",
        "score",
        "--model",
        str(tiny_gpt2_dir),
        "--device",
        "cpu",
        "--prompt",
        "[BLANK] is a nurse.",
        "--candidates",
        "He,She",
    ]
    assert main(args) == 0
    whole = capsys.readouterr().out
    assert (
        main(
            args
            + [
                "--device-map",
                "auto",
                "--max-memory",
                "cpu=120KB",
                "--offload-folder",
                str(tmp_path / "off"),
            ]
        )
        == 0
    )
    placed = capsys.readouterr().out
    assert placed == whole and "He" in placed  # the printed (rounded) scores agree
