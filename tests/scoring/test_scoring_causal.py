"""Tests of biasamp.scoring's causal (decoder-only) scorer on tiny seeded GPT-2, Llama and Qwen2
models built locally (real tokenizer classes, saved and loaded through ``from_pretrained(dir)``).

The reference is an independent naive computation written here: one call of the full model
(``AutoModelForCausalLM(...).logits``) per filled sentence, no batching, no padding, no cache,
the sentence tokenised as plain text (BOS prepended where the tokenizer adds none) and the
prefix's token count found by tokenising the text before the blank on its own; float64
log-softmax.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biasamp import BiasampError, UnknownNameError  # noqa: E402
from biasamp.scoring import CausalLMScorer, MaskedLMScorer, load_scorer  # noqa: E402

PROMPTS = [
    "he is a good [BLANK].",
    "[BLANK] was a new cook.",
    "the old [BLANK] said she was a small baker.",
    "they were [BLANK]",
    "she is a french [BLANK] !",
    "[BLANK] is a major writer.",
    "his job was [BLANK].",
]
# single-token, split, multi-word candidates; "janitor" starts with a standalone space piece
# ("Ġ j an itor") in the tiny GPT-2's vocabulary
CANDS = ["nurse", "hairdresser", "they are", "cook", "salesperson", "janitor"]
MODES = ("continuation", "sentence")
NAMES = ("gpt2", "llama", "qwen")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def dirs(tiny_gpt2_dir, tiny_llama_dir, tiny_qwen2_chat_dir):
    return {"gpt2": tiny_gpt2_dir, "llama": tiny_llama_dir, "qwen": tiny_qwen2_chat_dir}


@pytest.fixture(scope="module")
def scorers(dirs):
    return {name: CausalLMScorer(d, device="cpu", batch_size=5) for name, d in dirs.items()}


@pytest.fixture(scope="module")
def gpt2(scorers):
    return scorers["gpt2"]


# ----------------------------------------------------------------------------- naive reference
def _context_ids(tok, text):
    ids = tok(text)["input_ids"]
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    return ids if (ids and ids[0] == bos) else [bos] + ids


def naive(path, prompts, cands, mode):
    """log P per (prompt, candidate), one unbatched full-model call per filled sentence."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        pre, post = p.split("[BLANK]")
        n_prefix = len(_context_ids(tok, pre.rstrip())) if pre.strip() else 1
        for j, c in enumerate(cands):
            ids = _context_ids(tok, pre + c + post)
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids])).logits[0]
            logp = torch.log_softmax(logits.double(), dim=-1)
            start = n_prefix if mode == "continuation" else 1
            out[i, j] = sum(logp[t - 1, ids[t]].item() for t in range(start, len(ids)))
    return out


# ----------------------------------------------------------------------------- the tiny models
def test_tiny_causal_tokenizers_are_what_the_tests_claim(scorers):
    g, ll, q = (scorers[n].tokenizer for n in NAMES)
    assert type(g).__name__ == "GPT2Tokenizer" and g.pad_token is None
    assert g("he is")["input_ids"][0] != g.bos_token_id  # GPT-2 adds no BOS
    assert g.tokenize("a good nurse.")[2] == "\u0120nurse"  # leading-space BPE piece
    assert type(ll).__name__ == "LlamaTokenizer" and ll.pad_token is None
    assert ll("he is")["input_ids"][0] == ll.bos_token_id  # Llama adds <s>
    assert type(q).__name__ == "Qwen2Tokenizer" and q.bos_token is None and q.chat_template
    assert [s.context_id for s in scorers.values()] == [
        g.eos_token_id,
        ll.bos_token_id,
        q.eos_token_id,
    ]
    assert len(g.tokenize(" hairdresser")) > 1  # a split candidate


def test_tiny_causal_models_are_deterministic(tmp_path):
    import tiny_models as tm

    a = tm.make_tiny_gpt2(tmp_path / "a")
    b = tm.make_tiny_gpt2(tmp_path / "b")
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()


# ----------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_estimators_equal_naive_per_sentence_computation(name, mode, scorers, dirs):
    r = scorers[name].score(PROMPTS, CANDS, scoring=mode)
    ref = naive(dirs[name], PROMPTS, CANDS, mode)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=1e-5)
    assert r.scoring == mode


def test_default_estimator_is_continuation(gpt2):
    r = gpt2.score(PROMPTS[:2], CANDS)
    assert r.scoring == "continuation"
    np.testing.assert_array_equal(
        r.log_prob, gpt2.score(PROMPTS[:2], CANDS, scoring="continuation").log_prob
    )


@pytest.mark.parametrize("name", NAMES)
def test_sentence_is_continuation_plus_the_prefix_and_probs_agree(name, scorers, dirs):
    s = scorers[name]
    cont = s.score(PROMPTS, CANDS, scoring="continuation")
    sent = s.score(PROMPTS, CANDS, scoring="sentence")
    # the two runs batch differently: float32 rounding (1e-7 relative) is all that may differ
    diff = sent.log_prob - cont.log_prob  # log P(prefix): the same for every candidate
    np.testing.assert_allclose(diff, diff[:, :1].repeat(len(CANDS), axis=1), atol=1e-5)
    starts = [i for i, p in enumerate(PROMPTS) if p.startswith("[BLANK]")]
    np.testing.assert_allclose(diff[starts], 0.0, atol=1e-5)  # empty prefix: nothing to add
    assert (diff[[i for i in range(len(PROMPTS)) if i not in starts]] < 0).all()
    np.testing.assert_allclose(sent.prob, cont.prob, atol=1e-6)
    np.testing.assert_allclose(cont.prob.sum(axis=1), 1.0, atol=1e-12)
    assert (cont.mass <= 1.0).all() and (sent.mass <= cont.mass).all()


def test_blank_at_end_is_the_next_word_probability(gpt2, gpt2_naive_model):
    tok, model = gpt2_naive_model
    r = gpt2.score(["they were [BLANK]"], ["cook", "nurse"])
    ids = _context_ids(tok, "they were")
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)
    want = [logp[tok.convert_tokens_to_ids("\u0120" + w)].item() for w in ("cook", "nurse")]
    assert [len(tok.tokenize(" " + w)) for w in ("cook", "nurse")] == [1, 1]
    np.testing.assert_allclose(r.log_prob[0], want, atol=1e-5)


@pytest.fixture(scope="module")
def gpt2_naive_model(dirs):
    return (
        transformers.AutoTokenizer.from_pretrained(dirs["gpt2"]),
        transformers.AutoModelForCausalLM.from_pretrained(dirs["gpt2"]).eval(),
    )


def test_candidate_pieces_carry_the_leading_space(gpt2):
    ((ids, first),) = gpt2.sequences(
        [("he is a good nurse.", 13, 18, "p", "nurse")], "continuation"
    )
    pieces = gpt2.tokenizer.convert_ids_to_tokens(list(ids))
    assert pieces[0] == "<|endoftext|>" and pieces[first] == "\u0120nurse"
    assert pieces[1:first] == ["he", "\u0120is", "\u0120a", "\u0120good"]


# ----------------------------------------------------------------------------- invariance
@pytest.mark.parametrize("name", NAMES)
def test_kv_reuse_equals_no_reuse_and_runs_fewer_tokens(name, scorers, dirs):
    fast = scorers[name]
    assert fast.share_prefix and fast.head_split
    slow = CausalLMScorer(dirs[name], device="cpu", batch_size=5, share_prefix=False)
    assert not slow.share_prefix
    for mode in MODES:
        a = fast.score(PROMPTS, CANDS, scoring=mode)
        b = slow.score(PROMPTS, CANDS, scoring=mode)
        np.testing.assert_allclose(a.log_prob, b.log_prob, rtol=0, atol=1e-5)
    seqs = [
        ids
        for ids, _ in fast.sequences(
            [
                (p.replace("[BLANK]", c), p.index("[BLANK]"), p.index("[BLANK]") + len(c), p, c)
                for p in PROMPTS
                for c in CANDS
            ],
            "continuation",
        )
    ]
    from biasamp.scoring._causal import plan_splits

    split = plan_splits(seqs)
    whole = sum(len(s) - 1 for s in seqs)
    shared = sum(len(p) for p in {s[:k] for s, k in zip(seqs, split)}) + sum(
        len(s) - 1 - k for s, k in zip(seqs, split)
    )
    assert shared < 0.75 * whole  # the shared prefixes are run once


@pytest.mark.parametrize("batch_size, chunk_size", [(1, 2048), (3, 2), (64, 1)])
def test_batch_size_and_chunking_do_not_change_results(dirs, gpt2, batch_size, chunk_size):
    s = CausalLMScorer(dirs["gpt2"], device="cpu", batch_size=batch_size, chunk_size=chunk_size)
    for mode in MODES:
        np.testing.assert_allclose(
            s.score(PROMPTS, CANDS, scoring=mode).log_prob,
            gpt2.score(PROMPTS, CANDS, scoring=mode).log_prob,
            rtol=0,
            atol=1e-5,
        )


@pytest.mark.parametrize("name", NAMES)
def test_order_of_prompts_and_candidates_is_preserved(name, scorers):
    s = scorers[name]
    ref = s.score(PROMPTS, CANDS)
    pi, ci = [3, 0, 6, 2, 5, 1, 4], [4, 2, 5, 0, 1, 3]
    r = s.score([PROMPTS[i] for i in pi], [CANDS[j] for j in ci])
    np.testing.assert_allclose(r.log_prob, ref.log_prob[np.ix_(pi, ci)], rtol=0, atol=1e-5)


def test_per_prompt_candidates_and_duplicate_sentences(gpt2):
    prompts = ["[BLANK] is a nurse.", "he is a [BLANK].", "[BLANK] is a cook."]
    per = [["He", "She"], ["nurse", "cook"], ["He", "She"]]
    r = gpt2.score(prompts, per)
    assert r.candidates_for(1) == ("nurse", "cook")
    for i, (p, cands) in enumerate(zip(prompts, per)):
        np.testing.assert_allclose(r.log_prob[i], gpt2.score([p], cands).log_prob[0], atol=1e-5)
    # "he is a nurse." is the same filled sentence from two prompts (different candidate spans)
    r2 = gpt2.score(
        ["[BLANK] is a nurse.", "he is a [BLANK]."], [["he"], ["nurse"]], scoring="sentence"
    )
    assert r2.log_prob[0, 0] == pytest.approx(r2.log_prob[1, 0], abs=1e-9)


def test_multi_word_candidates_at_sentence_start(scorers, dirs):
    prompts = ["[BLANK] a new nurse.", "[BLANK] an old cook."]
    cands = ["He is", "She is", "They are"]
    for name in ("gpt2", "llama"):
        r = scorers[name].score(prompts, cands)
        np.testing.assert_allclose(
            r.log_prob, naive(dirs[name], prompts, cands, "continuation"), atol=1e-5
        )


def test_fallback_without_cache_reuse_or_head_split_gives_same_numbers(dirs, gpt2, monkeypatch):
    import biasamp.scoring._causal as engine

    ref = {m: gpt2.score(PROMPTS, CANDS, scoring=m).log_prob for m in MODES}
    monkeypatch.setattr(engine, "select_cache", lambda cache, index: None)
    s = CausalLMScorer(dirs["gpt2"], device="cpu", batch_size=5)
    assert not s.share_prefix  # the load-time self-check found the cache unusable
    assert not s.provenance["share_prefix"]
    np.testing.assert_allclose(s.score(PROMPTS, CANDS).log_prob, ref["continuation"], atol=1e-5)
    s._body_head = None  # the full model's logits, gathered at the scored positions
    np.testing.assert_allclose(
        s.score(PROMPTS, CANDS, scoring="sentence").log_prob, ref["sentence"], atol=1e-5
    )


def test_plan_splits_hand_computed():
    from biasamp.scoring._causal import plan_splits

    seqs = [(0, 1, 2, 3, 4), (0, 1, 2, 5), (0, 1, 2), (0, 9, 8), (0, 1, 2, 3, 4, 6)]
    # sorted: (0,1,2) (0,1,2,3,4) (0,1,2,3,4,6) (0,1,2,5) (0,9,8)
    assert plan_splits(seqs) == [4, 3, 2, 2, 5]
    assert plan_splits(seqs, share=False) == [4, 3, 2, 2, 5]
    assert plan_splits(seqs, min_shared=4) == [4, 3, 2, 2, 5]
    assert plan_splits([(0, 1, 2, 3), (0, 1, 2, 7, 8)]) == [3, 3]


def test_score_cache_second_run_does_not_call_the_model(dirs, tmp_path):
    s = CausalLMScorer(dirs["gpt2"], device="cpu", score_cache=tmp_path / "c")
    a = s.score(PROMPTS, CANDS)
    calls = s.n_forward_calls
    assert calls > 0
    s2 = CausalLMScorer(dirs["gpt2"], device="cpu", score_cache=tmp_path / "c")
    b = s2.score(PROMPTS, CANDS)
    np.testing.assert_array_equal(a.log_prob, b.log_prob)
    assert s2.n_forward_calls == 0
    c = s2.score(PROMPTS, CANDS, scoring="sentence")  # another estimator: another cache file
    assert s2.n_forward_calls > 0 and not np.allclose(c.log_prob, a.log_prob)


def test_score_cache_keeps_apart_what_another_context_token_gives(dirs, tmp_path):
    # the same prompts after another context token are other numbers: a cache hit across
    # contexts returned the first context's scores
    s = CausalLMScorer(dirs["gpt2"], device="cpu", score_cache=tmp_path / "c")
    a = s.score(PROMPTS, CANDS)
    other = s.tokenizer.convert_ids_to_tokens(7)
    s2 = CausalLMScorer(dirs["gpt2"], device="cpu", score_cache=tmp_path / "c", context_token=other)
    b = s2.score(PROMPTS, CANDS)
    assert s2.n_forward_calls > 0 and s2.context_id == 7 != s.context_id
    plain = CausalLMScorer(dirs["gpt2"], device="cpu", context_token=other).score(PROMPTS, CANDS)
    np.testing.assert_allclose(b.log_prob, plain.log_prob, rtol=0, atol=1e-12)
    assert not np.allclose(a.log_prob, b.log_prob)


# ----------------------------------------------------------------------------- errors
def test_wrong_estimator_for_a_causal_model(gpt2):
    with pytest.raises(
        BiasampError,
        match=r"scoring 'word' is an estimator for masked language "
        r"models, but model '.*tiny-gpt2' is a causal language "
        r"model; valid: 'continuation', 'sentence'",
    ):
        gpt2.score(PROMPTS, CANDS, scoring="word")
    with pytest.raises(
        UnknownNameError,
        match=r"scoring must be one of 'continuation', "
        r"'sentence'; got 'sentense' \(did you mean",
    ):
        gpt2.score(PROMPTS, CANDS, scoring="sentense")


def test_masked_model_refused_by_the_causal_scorer_and_vice_versa(tiny_bert_dir, dirs):
    with pytest.raises(
        BiasampError,
        match=r"model_type 'causal' does not fit model '.*tiny-bert"
        r"': it is a masked language model \(config.json "
        r"architectures \['BertForMaskedLM'\]\)",
    ):
        CausalLMScorer(tiny_bert_dir, device="cpu")
    with pytest.raises(
        BiasampError,
        match=r"model_type 'masked' does not fit .* it is a causal "
        r"language model",
    ):
        MaskedLMScorer(dirs["llama"], device="cpu")
    with pytest.raises(
        BiasampError,
        match=r"model_type must be one of 'auto', 'masked', "
        r"'causal'; got 'decoder'",
    ):
        load_scorer(dirs["gpt2"], model_type="decoder")


def test_load_scorer_picks_the_class_from_the_config(dirs, tiny_bert_dir):
    assert type(load_scorer(dirs["gpt2"], device="cpu")).__name__ == "CausalLMScorer"
    assert type(load_scorer(tiny_bert_dir, device="cpu")).__name__ == "MaskedLMScorer"


def test_prompt_too_long_for_the_model(gpt2):
    with pytest.raises(
        BiasampError,
        match=r"is \d+ tokens long \(with the context token\); the "
        r"model accepts at most 64",
    ):
        gpt2.score(["he is " + "a good " * 40 + "[BLANK]."], ["nurse"])


def test_trust_remote_code_stays_off(tmp_path, tiny_gpt2_dir):
    import shutil

    d = tmp_path / "remote"
    d.mkdir()
    for f in tiny_gpt2_dir.iterdir():  # its tokenizer: the config is what is refused
        if f.name.startswith(("tokenizer", "vocab", "merges", "special_tokens")):
            shutil.copy(f, d / f.name)
    (d / "config.json").write_text(
        '{"model_type": "tiny-remote", "architectures": '
        '["RemoteForCausalLM"], "auto_map": {"AutoConfig": '
        '"configuration_remote.RemoteConfig"}}'
    )
    marker = tmp_path / "ran"
    (d / "configuration_remote.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n"
        "from transformers import PretrainedConfig\n"
        "class RemoteConfig(PretrainedConfig):\n    model_type = 'tiny-remote'\n"
    )
    with pytest.raises(BiasampError, match=r"could not load causal LM .*remote.*custom code"):
        CausalLMScorer(d, device="cpu")
    assert not marker.exists()


def test_provenance_of_a_causal_scorer(gpt2, dirs):
    import hashlib

    p = gpt2.provenance
    assert p["model_type"] == "causal" and p["model_class"] == "GPT2LMHeadModel"
    assert p["context_token"] == "<|endoftext|>" and p["share_prefix"] and p["head_split"]
    digest = hashlib.sha256((dirs["gpt2"] / "model.safetensors").read_bytes()).hexdigest()
    assert p["weights_sha256"] == {"model.safetensors": digest}
    assert p["commit"] is None and "missing_weights" not in p
    assert "CausalLMScorer(" in repr(gpt2)


def test_audit_shows_leading_space_pieces(gpt2):
    a = gpt2.audit(["nurse", "hairdresser", "janitor"])
    assert a.loc[0, "pieces"] == ("\u0120nurse",) and not a.loc[1, "single_piece"]
    # a space piece of its own belongs to the word after it (else the continuation of
    # "janitor" would leave out the probability of its space, which "Ġnurse" includes)
    assert a.loc[2, "pieces"] == ("\u0120", "j", "an", "itor")


def test_bfloat16_on_cpu_is_close_to_float32(dirs, gpt2):
    s = CausalLMScorer(dirs["gpt2"], device="cpu", dtype="bfloat16")
    assert s.model.dtype == torch.bfloat16
    r = s.score(PROMPTS, CANDS)
    assert r.log_prob.dtype == np.float64
    np.testing.assert_allclose(r.prob, gpt2.score(PROMPTS, CANDS).prob, atol=0.1)


# ----------------------------------------------------------------------------- GPU
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype, atol", [("float32", 1e-4), ("bfloat16", 0.1), ("float16", 0.02)])
@pytest.mark.parametrize("name", NAMES)
def test_cuda_matches_cpu(name, dirs, scorers, dtype, atol):
    g = CausalLMScorer(dirs[name], device="cuda", dtype=dtype, batch_size=5)
    assert g.share_prefix and g.head_split
    for mode in MODES:
        r = g.score(PROMPTS, CANDS, scoring=mode)
        ref = scorers[name].score(PROMPTS, CANDS, scoring=mode)
        np.testing.assert_allclose(r.prob, ref.prob, rtol=0, atol=atol)
        np.testing.assert_allclose(r.prob.sum(axis=1), 1.0, atol=1e-12)
    assert g.provenance["device"].startswith("cuda")
