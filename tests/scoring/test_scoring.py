"""Tests of biasamp.scoring on tiny seeded models (offline, built in tmp folders).

Every estimator is compared with an independent naive implementation written here: one call of
the *full* model (``AutoModelForMaskedLM(...).logits``) per masked sentence, pieces found by
tokenising the candidate on its own (FitBERT's way), probabilities in float64.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tiny_models as tm  # noqa: E402
from biasamp import BiasampError, UnknownNameError  # noqa: E402
from biasamp.scoring import SCORING_MODES, MaskedLMScorer, ScoreResult, audit_candidates  # noqa: E402

PROMPTS = [
    "he is a good [BLANK].",
    "[BLANK] was a new cook.",
    "the old [BLANK] said she was a small baker.",
    "they were [BLANK]",
    "she is a french [BLANK] !",
    "[BLANK] is a major writer.",
    "the [BLANK] works.",
    "his job was [BLANK].",
]
# single-piece, two-piece, three-piece, and multi-word candidates
CANDS = ["nurse", "janitor", "hairdresser", "they are", "cook", "salesperson"]


MASKED_MODES = ("word", "first-piece", "pll")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bert_dir(tiny_bert_dir):
    return tiny_bert_dir


@pytest.fixture(scope="module")
def roberta_dir(tiny_roberta_dir):
    return tiny_roberta_dir


@pytest.fixture(scope="module")
def distil_dir(tiny_distilbert_dir):
    return tiny_distilbert_dir


@pytest.fixture(scope="module")
def bert(bert_dir):
    return MaskedLMScorer(bert_dir, device="cpu", batch_size=7)


@pytest.fixture(scope="module")
def roberta(roberta_dir):
    return MaskedLMScorer(roberta_dir, device="cpu", batch_size=7)


@pytest.fixture(scope="module")
def distil(distil_dir):
    return MaskedLMScorer(distil_dir, device="cpu", batch_size=7)


@pytest.fixture(scope="module")
def scorers(bert, roberta, distil):
    return {"bert": bert, "roberta": roberta, "distil": distil}


# ----------------------------------------------------------------------------- naive references
def _load(path):
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForMaskedLM.from_pretrained(path).eval()
    return tok, model


def _full_logp(model, ids):
    """float64 log-softmax of the full model's logits, one sentence (no batching, no padding)."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    return torch.log_softmax(logits.double(), dim=-1)


def _is_bpe(tok):
    return "Roberta" in type(tok).__name__


def _pieces_alone(tok, prompt, cand):
    """Candidate pieces from tokenising the candidate alone (leading space for BPE mid-sentence)."""
    if _is_bpe(tok):
        pre = prompt.split("[BLANK]")[0]
        return tok.tokenize(" " + cand if pre.endswith(" ") else cand)
    return tok.tokenize(cand)


def _masked_ids(tok, prompt, m):
    """Token ids of the prompt with m mask tokens in the blank, and the mask positions."""
    sep = "" if _is_bpe(tok) else " "
    text = prompt.replace("[BLANK]", sep.join([tok.mask_token] * m))
    ids = tok(text)["input_ids"]
    pos = [i for i, t in enumerate(ids) if t == tok.mask_token_id]
    assert len(pos) == m
    return ids, pos


def naive_first_piece(path, prompts, cands):
    tok, model = _load(path)
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        ids, (pos,) = _masked_ids(tok, p, 1)
        lp = _full_logp(model, ids)[pos]
        for j, c in enumerate(cands):
            first = tok.convert_tokens_to_ids(_pieces_alone(tok, p, c)[0])
            out[i, j] = lp[first].item()
    return out


def naive_word(path, prompts, cands):
    tok, model = _load(path)
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        for j, c in enumerate(cands):
            piece_ids = tok.convert_tokens_to_ids(_pieces_alone(tok, p, c))
            ids, pos = _masked_ids(tok, p, len(piece_ids))
            total = 0.0
            for t in range(len(piece_ids)):  # chain rule, left to right
                step = list(ids)
                for u in range(t):
                    step[pos[u]] = piece_ids[u]
                total += _full_logp(model, step)[pos[t], piece_ids[t]].item()
            out[i, j] = total
    return out


def naive_pll(path, prompts, cands):
    tok, model = _load(path)
    special = set(tok.all_special_ids)
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        for j, c in enumerate(cands):
            ids = tok(p.replace("[BLANK]", c))["input_ids"]
            total = 0.0
            for u, t in enumerate(ids):
                if t in special:
                    continue
                masked = list(ids)
                masked[u] = tok.mask_token_id
                total += _full_logp(model, masked)[u, t].item()
            out[i, j] = total
    return out


# ----------------------------------------------------------------------------- lightness
def test_import_biasamp_and_scoring_do_not_import_torch():
    code = (
        "import sys, biasamp, biasamp.scoring; "
        "assert biasamp.scoring.SCORING_MODES == ('word', 'first-piece', 'pll', "
        "'continuation', 'sentence'); "
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_scoring_modes_registry():
    from biasamp.scoring import DEFAULT_ESTIMATORS, ESTIMATORS, estimators_for

    assert SCORING_MODES == MASKED_MODES + ("continuation", "sentence")
    assert estimators_for("masked") == MASKED_MODES
    assert [ESTIMATORS.get(m) for m in SCORING_MODES] == ["masked"] * 3 + ["causal"] * 2
    assert DEFAULT_ESTIMATORS == {"masked": "word", "causal": "continuation"}


# ----------------------------------------------------------------------------- tiny models
def test_tiny_bert_vocab_splits_as_documented(bert):
    tok = bert.tokenizer
    for word, pieces in tm.SPLIT_OCCUPATIONS.items():
        assert tuple(tok.tokenize(word)) == pieces
    assert tok.tokenize("nurse") == ["nurse"]


def test_tiny_models_are_deterministic(tmp_path):
    a = tm.make_tiny_bert(tmp_path / "a", seed=3)
    b = tm.make_tiny_bert(tmp_path / "b", seed=3)
    c = tm.make_tiny_bert(tmp_path / "c", seed=4)
    wa, wb, wc = ((d / "model.safetensors").read_bytes() for d in (a, b, c))
    assert wa == wb and wa != wc


# ----------------------------------------------------------------------------- vs naive
@pytest.mark.parametrize("name", ["bert", "roberta", "distil"])
def test_first_piece_equals_direct_per_sentence_computation(name, scorers, request, caplog):
    scorer = scorers[name]
    path = request.getfixturevalue(f"{name}_dir" if name != "distil" else "distil_dir")
    with caplog.at_level(logging.WARNING, logger="biasamp.scoring"):
        r = scorer.score(PROMPTS, CANDS, scoring="first-piece")
    ref = naive_first_piece(path, PROMPTS, CANDS)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=2e-5)
    # FitBERT: softmax over the vocabulary, take the options' probabilities, renormalise
    ref_p = np.exp(ref) / np.exp(ref).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(r.prob, ref_p, rtol=0, atol=1e-6)
    assert "janitor" in caplog.text and "hairdresser" in caplog.text
    if name != "roberta":  # (BPE: "nurse" at a sentence start is "n urse", rightly named)
        assert "'nurse'" not in caplog.text  # single-piece candidates are not named


@pytest.mark.parametrize("name", ["bert", "roberta", "distil"])
def test_word_equals_naive_chain_rule_loop(name, scorers, request):
    path = request.getfixturevalue(f"{name}_dir")
    r = scorers[name].score(PROMPTS, CANDS, scoring="word")
    ref = naive_word(path, PROMPTS, CANDS)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=5e-5)


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_pll_equals_naive_pseudo_log_likelihood(name, scorers, request):
    path = request.getfixturevalue(f"{name}_dir")
    prompts, cands = PROMPTS[:3], ["nurse", "janitor", "they are"]
    r = scorers[name].score(prompts, cands, scoring="pll")
    np.testing.assert_allclose(r.log_prob, naive_pll(path, prompts, cands), rtol=0, atol=1e-4)


def test_roberta_uses_leading_space_pieces(roberta):
    audit = roberta.audit(["nurse", "hairdresser", "janitor"])
    assert audit["pieces"][0] == ("Ġnurse",)
    assert audit["n_pieces"][1] > 1 and audit["pieces"][1][0].startswith("Ġ")
    # at the start of a sentence there is no leading space
    start = roberta.audit(["nurse"], prompt="[BLANK] is here.")
    assert start["pieces"][0] == tuple(roberta.tokenizer.tokenize("nurse"))
    assert not start["pieces"][0][0].startswith("Ġ")


# ----------------------------------------------------------------------------- invariants
def test_word_and_first_piece_agree_on_single_piece_candidates(bert):
    single = ["nurse", "cook", "baker", "he", "she"]
    a = bert.score(PROMPTS, single, scoring="word")
    b = bert.score(PROMPTS, single, scoring="first-piece")
    np.testing.assert_allclose(a.log_prob, b.log_prob, rtol=0, atol=2e-5)


def test_first_piece_cannot_separate_shared_first_piece_but_word_can(bert):
    # "jan" and "janitor" (= jan ##itor) share the first piece
    fp = bert.score(PROMPTS[:2], ["jan", "janitor"], scoring="first-piece")
    np.testing.assert_array_equal(fp.log_prob[:, 0], fp.log_prob[:, 1])
    w = bert.score(PROMPTS[:2], ["jan", "janitor"], scoring="word")
    assert np.all(w.log_prob[:, 1] < w.log_prob[:, 0] - 1e-6)  # janitor has a second factor < 1


@pytest.mark.parametrize("mode", MASKED_MODES)
def test_rows_sum_to_one_and_mass_is_raw_coverage(bert, mode):
    r = bert.score(PROMPTS, CANDS, scoring=mode)
    assert r.log_prob.shape == r.prob.shape == (len(PROMPTS), len(CANDS))
    assert r.log_prob.dtype == r.prob.dtype == r.mass.dtype == np.float64
    np.testing.assert_allclose(r.prob.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.mass, np.exp(r.log_prob).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(r.prob, np.exp(r.log_prob) / r.mass[:, None], rtol=1e-9)
    assert np.all(r.log_prob < 0) and np.all(np.isfinite(r.log_prob))
    assert r.scoring == mode and r.candidates == tuple(CANDS) and r.prompts == tuple(PROMPTS)


def test_single_mask_candidates_cover_at_most_all_mass(bert):
    # distinct single-piece candidates at one mask: their probabilities add up to <= 1
    r = bert.score(PROMPTS, ["nurse", "cook", "baker", "he", "she", "."], scoring="word")
    assert np.all(r.mass <= 1.0 + 1e-12)
    vocab = [t for t in bert.tokenizer.get_vocab() if not t.startswith(("[", "##"))]
    r_all = bert.score(PROMPTS[:1], vocab, scoring="first-piece")
    # the whole vocabulary minus specials and ## pieces: close to (but not above) 1
    assert 0.5 < r_all.mass[0] <= 1.0 + 1e-6


@pytest.mark.parametrize("mode", MASKED_MODES)
def test_batch_size_and_chunking_do_not_change_results(bert_dir, bert, mode):
    ref = bert.score(PROMPTS, CANDS, scoring=mode)  # batch_size 7
    one = MaskedLMScorer(bert_dir, device="cpu", batch_size=1, chunk_size=3)
    r = one.score(PROMPTS, CANDS, scoring=mode)
    np.testing.assert_allclose(r.log_prob, ref.log_prob, rtol=0, atol=5e-5)
    np.testing.assert_allclose(r.prob, ref.prob, rtol=0, atol=5e-5)  # |dp| <= p |dlog p|


def test_a_huge_batch_size_is_one_forward_pass_per_chunk(bert_dir, bert):
    """batch_size has no cap: a batch never holds more than the contexts of one chunk of
    prompts (chunk_size, 2,048 by default), so 10**9 costs what one chunk costs."""
    ref = bert.score(PROMPTS, CANDS, scoring="word")  # batch_size 7
    big = MaskedLMScorer(bert_dir, device="cpu", batch_size=10**9, chunk_size=3)
    r = big.score(PROMPTS, CANDS, scoring="word")
    assert big.n_forward_calls == -(-len(PROMPTS) // 3)
    np.testing.assert_allclose(r.log_prob, ref.log_prob, rtol=0, atol=5e-5)


def test_running_out_of_memory_is_one_line_naming_the_batch_size(bert_dir, tmp_path, monkeypatch):
    s = MaskedLMScorer(
        bert_dir, device="cpu", batch_size=10**9, chunk_size=2, score_cache=str(tmp_path / "cache")
    )
    calls = []

    def forward(mode, rows, on_batch):
        calls.append(len(rows))
        if len(calls) == 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")
        return np.zeros(len(rows))

    monkeypatch.setattr(s, "_score_rows", forward)
    with pytest.raises(
        BiasampError,
        match=r"^model '.*' ran out of memory on cpu scoring a "
        r"batch of up to 1000000000 prompts "
        r"\(OutOfMemoryError\); lower batch_size "
        r"\(--batch-size\); the 2 prompts scored before are "
        r"in the score cache$",
    ):
        s.score(PROMPTS, CANDS, scoring="word")

    def other(mode, rows, on_batch):
        raise RuntimeError("x")

    monkeypatch.setattr(s, "_score_rows", other)
    with pytest.raises(RuntimeError, match=r"^x$"):  # other errors pass through unchanged
        s.score(["[BLANK] is here."], CANDS, scoring="word")


@pytest.mark.parametrize("mode", MASKED_MODES)
def test_order_of_prompts_and_candidates_is_preserved(bert, mode):
    ref = bert.score(PROMPTS, CANDS, scoring=mode)
    rng = np.random.default_rng(0)
    pi, ci = rng.permutation(len(PROMPTS)), rng.permutation(len(CANDS))
    r = bert.score([PROMPTS[i] for i in pi], [CANDS[j] for j in ci], scoring=mode)
    np.testing.assert_allclose(r.log_prob, ref.log_prob[np.ix_(pi, ci)], rtol=0, atol=5e-5)


def test_iterables_and_numpy_strings_are_accepted(bert):
    ref = bert.score(PROMPTS, CANDS)
    r = bert.score((p for p in PROMPTS), np.array(CANDS))
    np.testing.assert_array_equal(r.log_prob, ref.log_prob)
    assert r.prompts == tuple(PROMPTS)


def test_per_prompt_candidate_lists(bert):
    per = [["he", "she", "they are"], ["nurse", "janitor", "cook"]]
    r = bert.score(PROMPTS[:2], per, scoring="word")
    a = bert.score(PROMPTS[:1], per[0], scoring="word")
    b = bert.score(PROMPTS[1:2], per[1], scoring="word")
    np.testing.assert_allclose(r.log_prob, np.vstack([a.log_prob, b.log_prob]), atol=5e-5)
    assert r.candidates == (("he", "she", "they are"), ("nurse", "janitor", "cook"))
    frame = r.to_frame()
    assert list(frame["candidate"]) == per[0] + per[1]
    assert list(frame.columns) == [
        "prompt_index",
        "prompt",
        "candidate",
        "log_prob",
        "prob",
        "mass",
    ]


def test_distinct_contexts_run_once(bert):
    # T->A-like: 8 prompts x 3 single-piece candidates share one context per prompt
    before = bert.n_forward_calls
    from biasamp.scoring._scorer import build_queries
    from biasamp.scoring._spans import locate_spans

    tok = bert.tokenizer
    rows = [
        (p.replace("[BLANK]", c), p.index("[BLANK]"), p.index("[BLANK]") + len(c), p, c)
        for p in PROMPTS
        for c in ["he", "she", "nurse"]
    ]
    qs = build_queries("word", locate_spans(tok, rows), tok.mask_token_id)
    assert len(qs.contexts) == len(PROMPTS) and len(qs) == 3 * len(PROMPTS)
    # word with pieces 1, 2, 3 and a multi-word (2 pieces): step-0 contexts 1/2/3 masks (3),
    # step-1 contexts: janitor, hairdresser, "they are" (3); step-2: hairdresser (1) -> 7
    rows = [
        (PROMPTS[0].replace("[BLANK]", c), 13, 13 + len(c), PROMPTS[0], c)
        for c in ["nurse", "cook", "janitor", "hairdresser", "they are"]
    ]
    qs = build_queries("word", locate_spans(tok, rows), tok.mask_token_id)
    assert len(qs.contexts) == 7 and len(qs) == 1 + 1 + 2 + 3 + 2
    assert bert.n_forward_calls == before


def test_lm_head_at_mask_equals_full_model_output(scorers):
    from biasamp.scoring._load import lm_head_fn

    for scorer in scorers.values():
        model, tok = scorer.model, scorer.tokenizer
        encoder, head = lm_head_fn(model)
        enc = tok(
            ["he is a good nurse.", "she was a new cook ."], padding=True, return_tensors="pt"
        )
        with torch.no_grad():
            full = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
            hidden = encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[0]
            rows, cols = torch.tensor([0, 0, 1]), torch.tensor([1, 3, 2])
            part = head(hidden[rows, cols])
        torch.testing.assert_close(part, full[rows, cols], rtol=0, atol=1e-5)


def test_full_model_fallback_gives_same_numbers(bert_dir):
    s = MaskedLMScorer(bert_dir, device="cpu", batch_size=5)
    ref = s.score(PROMPTS, CANDS)
    s._head = None  # an architecture without a known head split
    r = s.score(PROMPTS, CANDS)
    np.testing.assert_allclose(r.log_prob, ref.log_prob, rtol=0, atol=1e-5)


def test_extra_words_become_single_pieces(tmp_path):
    p = tm.make_tiny_bert(tmp_path / "x", extra_words=["surgeon", "plumber"])
    s = MaskedLMScorer(p, device="cpu")
    audit = s.audit(["surgeon", "plumber", "janitor"])
    assert list(audit["single_piece"]) == [True, True, False]


# ----------------------------------------------------------------------------- audit
def test_audit_columns_and_shared_first_pieces(bert):
    a = bert.audit(["nurse", "janitor", "jan", "hairdresser", "they are"])
    assert list(a.columns) == [
        "candidate",
        "pieces",
        "n_pieces",
        "single_piece",
        "first_piece",
        "shares_first_piece_with",
    ]
    assert list(a["n_pieces"]) == [1, 2, 1, 3, 2]
    assert a["pieces"][3] == ("hair", "##dre", "##sser")
    assert a["first_piece"][4] == "they"
    assert a["shares_first_piece_with"][1] == ("jan",)
    assert a["shares_first_piece_with"][2] == ("janitor",)
    assert a["shares_first_piece_with"][0] == ()


def test_audit_candidates_accepts_a_model_folder(bert_dir):
    a = audit_candidates(str(bert_dir), ["cashier"])
    assert a["pieces"][0] == ("cash", "##ier")


# ----------------------------------------------------------------------------- cache
def test_cache_second_run_does_not_call_the_model(bert_dir, tmp_path, monkeypatch):
    s = MaskedLMScorer(bert_dir, device="cpu", score_cache=tmp_path / "cache")
    first = s.score(PROMPTS, CANDS, scoring="word")
    calls = s.n_forward_calls
    assert calls > 0

    def boom(*a, **k):
        raise AssertionError("model called despite the cache")

    s2 = MaskedLMScorer(bert_dir, device="cpu", score_cache=tmp_path / "cache")
    monkeypatch.setattr(s2.model, "forward", boom)
    monkeypatch.setattr(s2.model.base_model, "forward", boom)
    again = s2.score(PROMPTS, CANDS, scoring="word")
    assert s2.n_forward_calls == 0
    np.testing.assert_array_equal(again.log_prob, first.log_prob)  # exact round trip
    # another estimator, or new prompts, are not served from the cache
    with pytest.raises(AssertionError, match="despite the cache"):
        s2.score(PROMPTS, CANDS, scoring="first-piece")
    with pytest.raises(AssertionError, match="despite the cache"):
        s2.score(PROMPTS + ["the [BLANK] is here."], CANDS, scoring="word")


def test_cache_key_follows_the_weights_and_the_config(bert_dir, tmp_path):
    """The same folder name with other weights, or another config, is another cache file."""
    import shutil

    from safetensors.torch import load_file, save_file

    d = tmp_path / "bert"
    shutil.copytree(bert_dir, d)
    cache = tmp_path / "cache"

    def files():
        MaskedLMScorer(d, device="cpu", score_cache=cache).score(PROMPTS[:1], CANDS)
        return len(list(cache.glob("scores-*.sqlite")))

    assert files() == 1 and files() == 1  # the same folder: the same cache file
    weights = load_file(d / "model.safetensors")
    name = next(k for k in weights if k.endswith("word_embeddings.weight"))
    weights[name] = weights[name] + 1.0
    save_file(weights, d / "model.safetensors", metadata={"format": "pt"})
    assert files() == 2
    config = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    assert files() == 3


def test_cache_partial_hit_only_runs_new_prompts(bert_dir, tmp_path):
    s = MaskedLMScorer(bert_dir, device="cpu", score_cache=tmp_path / "c", batch_size=100)
    s.score(PROMPTS[:4], ["nurse", "cook"], scoring="first-piece")
    before = s.n_forward_calls
    r = s.score(PROMPTS, ["nurse", "cook"], scoring="first-piece")
    assert s.n_forward_calls == before + 1  # one batch of the 4 new prompts
    ref = MaskedLMScorer(bert_dir, device="cpu").score(
        PROMPTS, ["nurse", "cook"], scoring="first-piece"
    )
    np.testing.assert_allclose(r.log_prob, ref.log_prob, atol=2e-5)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "prompts, match",
    [
        (
            ["he is a good nurse."],
            r"prompts\[0\] must contain the blank '\[BLANK\]' exactly once; "
            r"found it 0 times",
        ),
        (["[BLANK] is a [BLANK]."], r"exactly once; found it 2 times in '\[BLANK\] is a"),
        ([], "at least one prompt"),
        ("[BLANK] is here.", "not a single string"),
        ([3], r"prompts\[0\] must be a string; got int"),
    ],
)
def test_bad_prompts(bert, prompts, match):
    with pytest.raises(BiasampError, match=match):
        bert.score(prompts, ["he", "she"])


@pytest.mark.parametrize(
    "cands, match",
    [
        ([], "candidates must contain at least one candidate; got an empty list"),
        ("he,she", "not a single string"),
        (["he", ""], r"candidates\[1\] must be a non-empty word; got ''"),
        (["he", " she"], r"must not start or end with whitespace; got ' she'"),
        (["he", "he"], r"must not repeat a candidate .* 'he' appears more than once"),
        (["he", ["she"]], "not a mix"),
        ([["he", "she"], ["he"]], r"same length; candidates\[0\] has 2, candidates\[1\] has 1"),
        ([["he", "she"]], r"one list per prompt \(2\); got 1 lists"),
        ([["he", "she"], []], r"candidates\[1\] must contain at least one candidate"),
    ],
)
def test_bad_candidates(bert, cands, match):
    with pytest.raises(BiasampError, match=match):
        bert.score(PROMPTS[:2], cands)


def test_candidate_that_tokenises_to_nothing(bert):
    with pytest.raises(BiasampError, match=r"candidate '\\u200b' tokenises to no pieces"):
        bert.score(PROMPTS[:1], ["he", "\u200b"])


def test_candidate_with_unknown_piece(bert):
    with pytest.raises(BiasampError, match=r"candidate '€' contains a piece unknown .*\[UNK\]"):
        bert.score(PROMPTS[:1], ["he", "€"])


def test_candidate_not_on_token_boundary(bert):
    # "ja" + "nitor" -> "janitor" = jan ##itor: the piece "jan" straddles the candidate's end
    with pytest.raises(
        BiasampError,
        match=r"candidate 'ja' does not end on a token boundary .*"
        r"'jan'",
    ):
        bert.score(["he is a [BLANK]nitor."], ["ja", "he"])


def test_prompt_too_long(bert):
    long = "he is " + "a good " * 40 + "[BLANK]."
    with pytest.raises(BiasampError, match=r"tokens long; the model accepts at most 64"):
        bert.score([long], ["nurse"])


def test_unknown_scoring_mode_with_did_you_mean(bert):
    with pytest.raises(
        UnknownNameError,
        match=r"scoring must be one of 'word', 'first-piece', "
        r"'pll'; got 'first_piece' \(did you mean "
        r"'first-piece'\?\)",
    ):
        bert.score(PROMPTS, ["he"], scoring="first_piece")


def test_blank_must_be_a_nonempty_string(bert):
    with pytest.raises(BiasampError, match="blank must be a non-empty string; got ''"):
        bert.score(PROMPTS, ["he"], blank="")


def test_custom_blank(bert):
    a = bert.score(["he is a good ___."], ["nurse", "cook"], blank="___")
    b = bert.score(["he is a good [BLANK]."], ["nurse", "cook"])
    np.testing.assert_array_equal(a.log_prob, b.log_prob)


def test_unknown_model_path(tmp_path):
    missing = tmp_path / "no_such_model"
    with pytest.raises(BiasampError, match=r"model '.*no_such_model': no such folder"):
        MaskedLMScorer(str(missing))
    with pytest.raises(BiasampError, match=r"model must be a Hugging Face model name"):
        MaskedLMScorer("")


def test_folder_that_is_not_a_model(tmp_path):
    (tmp_path / "junk").mkdir()
    with pytest.raises(
        BiasampError,
        match=r"model '.*junk': no config.json in .*junk \(not a "
        r"transformers model folder\)",
    ):
        MaskedLMScorer(str(tmp_path / "junk"))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"batch_size": 0}, "batch_size must be a positive integer; got 0"),
        ({"batch_size": 2.5}, "batch_size must be a positive integer; got 2.5"),
        ({"chunk_size": -1}, "chunk_size must be a positive integer; got -1"),
        ({"dtype": "float128"}, r"dtype must be one of .*; got 'float128'"),
        ({"dtype": "bfloat"}, r"did you mean 'bfloat16'"),
        (
            {"device": "tpu9"},
            r"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'; got 'tpu9'",
        ),
    ],
)
def test_bad_constructor_arguments(bert_dir, kwargs, match):
    with pytest.raises(BiasampError, match=match):
        MaskedLMScorer(bert_dir, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA errors")
def test_cuda_and_fp16_errors_without_cuda(bert_dir):
    with pytest.raises(BiasampError, match="device 'cuda' requested but CUDA is not available"):
        MaskedLMScorer(bert_dir, device="cuda")
    with pytest.raises(BiasampError, match="dtype 'float16' needs a CUDA device; got device 'cpu'"):
        MaskedLMScorer(bert_dir, device="cpu", dtype="float16")


def test_bfloat16_on_cpu_is_close_to_float32(bert_dir, bert):
    s = MaskedLMScorer(bert_dir, device="cpu", dtype="bfloat16")
    assert s.model.dtype == torch.bfloat16
    r = s.score(PROMPTS, CANDS, scoring="first-piece")
    ref = bert.score(PROMPTS, CANDS, scoring="first-piece")
    assert r.log_prob.dtype == np.float64
    np.testing.assert_allclose(r.prob, ref.prob, atol=0.1)  # bf16 has ~3 significant digits
    assert s.provenance["dtype"] == "bfloat16"


def test_provenance(bert, bert_dir):
    p = bert.provenance
    assert p["model"] == str(bert_dir) and p["model_class"] == "BertForMaskedLM"
    assert p["tokenizer_class"] == "BertTokenizer" and p["device"] == "cpu"
    assert p["dtype"] == "float32" and set(p["versions"]) == {"biasamp", "torch", "transformers"}
    assert "MaskedLMScorer(" in repr(bert)


def test_score_result_from_log_prob_hand_computed():
    # probabilities 0.1, 0.3, 0.1 -> mass 0.5, renormalised 0.2, 0.6, 0.2
    r = ScoreResult.from_log_prob(
        np.log([[0.1, 0.3, 0.1]]), candidates=("a", "b", "c"), scoring="word"
    )
    np.testing.assert_allclose(r.prob, [[0.2, 0.6, 0.2]], rtol=1e-12)
    np.testing.assert_allclose(r.mass, [0.5], rtol=1e-12)
    # very negative log probs do not underflow the renormalisation: e^-1000 : e^-1001
    r = ScoreResult.from_log_prob([[-1000.0, -1001.0]], candidates=("a", "b"), scoring="pll")
    np.testing.assert_allclose(r.prob[0], [1 / (1 + np.exp(-1)), 1 / (1 + np.exp(1))])
    assert r.mass[0] == 0.0


# ----------------------------------------------------------------------------- GPU
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype, atol", [("float32", 1e-4), ("bfloat16", 0.1), ("float16", 0.02)])
def test_cuda_matches_cpu(bert_dir, bert, dtype, atol):
    g = MaskedLMScorer(bert_dir, device="cuda", dtype=dtype, batch_size=7)
    for mode in MASKED_MODES:
        r = g.score(PROMPTS, CANDS, scoring=mode)
        ref = bert.score(PROMPTS, CANDS, scoring=mode)
        np.testing.assert_allclose(r.prob, ref.prob, rtol=0, atol=atol)
        np.testing.assert_allclose(r.prob.sum(axis=1), 1.0, atol=1e-12)
    assert g.provenance["device"].startswith("cuda")


# ----------------------------------------------------------------------------- FitBERT
def test_first_piece_matches_fitbert_if_installed(bert_dir, bert):
    fitbert = pytest.importorskip("fitbert")
    tok, model = _load(bert_dir)

    class _LogitsOnly(torch.nn.Module):  # FitBERT expects model(ids) -> logits tensor
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(input_ids=ids).logits

    fb = fitbert.FitBert(model=_LogitsOnly(model), tokenizer=tok, disable_gpu=True)
    cands = ["nurse", "cook", "baker", "janitor"]
    ours = bert.score(PROMPTS, cands, scoring="first-piece")
    for i, p in enumerate(PROMPTS):
        ranked, prob = fb.rank(p.replace("[BLANK]", "***mask***"), options=cands, with_prob=True)
        prob = np.asarray(prob) / np.sum(prob)
        for j, c in enumerate(cands):
            assert abs(prob[ranked.index(c)] - ours.prob[i, j]) < 1e-6


# ----------------------------------------------------------------------------- SentencePiece (ALBERT)
@pytest.fixture(scope="module")
def albert_dir(tiny_albert_dir):
    return tiny_albert_dir


@pytest.fixture(scope="module")
def albert(albert_dir):
    return MaskedLMScorer(albert_dir, device="cpu", batch_size=7)


def _filled_context(tok, prompt, cand, n_masks):
    """Ids of the filled sentence with the candidate's pieces replaced by ``n_masks`` masks.

    The candidate's pieces are its own tokenisation, found right after [CLS] and the tokens of
    the text before the blank; also returns those piece ids and the mask positions.
    """
    ids = tok(prompt.replace("[BLANK]", cand))["input_ids"]
    piece_ids = tok.convert_tokens_to_ids(tok.tokenize(cand))
    k = len(piece_ids)
    s = 1 + len(tok(prompt.split("[BLANK]")[0], add_special_tokens=False)["input_ids"])
    assert ids[s : s + k] == piece_ids, (prompt, cand, ids, piece_ids)
    ctx = ids[:s] + [tok.mask_token_id] * n_masks + ids[s + k :]
    return ctx, piece_ids, list(range(s, s + n_masks))


def naive_filled(path, prompts, cands, mode):
    """Per-candidate, unbatched first-piece / chain-rule scores on filled-sentence contexts."""
    tok, model = _load(path)
    out = np.zeros((len(prompts), len(cands)))
    for i, p in enumerate(prompts):
        for j, c in enumerate(cands):
            if mode == "first-piece":
                ctx, piece_ids, (pos,) = _filled_context(tok, p, c, 1)
                out[i, j] = _full_logp(model, ctx)[pos, piece_ids[0]].item()
                continue
            ctx, piece_ids, pos = _filled_context(tok, p, c, len(tok.tokenize(c)))
            total = 0.0
            for t in range(len(piece_ids)):
                step = list(ctx)
                for u in range(t):
                    step[pos[u]] = piece_ids[u]
                total += _full_logp(model, step)[pos[t], piece_ids[t]].item()
            out[i, j] = total
    return out


def test_albert_sentencepiece_pieces(albert):
    assert type(albert.tokenizer).__name__ == "AlbertTokenizer" and albert.tokenizer.is_fast
    audit = albert.audit(["nurse", "janitor", "hairdresser", "they are"])
    assert audit["pieces"].tolist() == [
        ("\u2581nurse",),
        ("\u2581jan", "itor"),
        ("\u2581hair", "dress", "er"),
        ("\u2581they", "\u2581are"),
    ]
    assert audit["n_pieces"].tolist() == [1, 2, 3, 2]
    start = albert.audit(["nurse"], prompt="[BLANK] is here.")  # sentence start: same piece
    assert start["pieces"][0] == ("\u2581nurse",)


@pytest.mark.parametrize("mode", ["first-piece", "word"])
def test_albert_equals_naive_per_candidate_loop(albert, albert_dir, mode):
    r = albert.score(PROMPTS, CANDS, scoring=mode)
    ref = naive_filled(albert_dir, PROMPTS, CANDS, mode)
    np.testing.assert_allclose(r.log_prob, ref, rtol=0, atol=5e-5)


def test_albert_pll_equals_naive(albert, albert_dir):
    prompts, cands = PROMPTS[:3], ["nurse", "janitor", "they are"]
    r = albert.score(prompts, cands, scoring="pll")
    np.testing.assert_allclose(r.log_prob, naive_pll(albert_dir, prompts, cands), rtol=0, atol=1e-4)


def test_albert_context_is_the_filled_sentence_not_the_masked_string(albert, albert_dir):
    # SentencePiece's Metaspace pre-tokenizer starts a new word after the [MASK] token, so the
    # literal masked string "good [MASK]." tokenises to '[MASK]', '\u2581', '.': a piece the
    # real sentence "good nurse." never has. The scorer masks the pieces of the filled
    # sentence instead, so the model sees the sentence as it is tokenised.
    tok = albert.tokenizer
    prompt = "he is a good [BLANK]."
    masked_string = tok.convert_ids_to_tokens(tok(prompt.replace("[BLANK]", "[MASK]"))["input_ids"])
    assert masked_string[-4:] == ["[MASK]", "\u2581", ".", "[SEP]"]
    ctx, _, _ = _filled_context(tok, prompt, "nurse", 1)
    assert tok.convert_ids_to_tokens(ctx)[-3:] == ["[MASK]", ".", "[SEP]"]
    r = albert.score([prompt], ["nurse", "cook"], scoring="first-piece")
    np.testing.assert_allclose(
        r.log_prob,
        naive_filled(albert_dir, [prompt], ["nurse", "cook"], "first-piece"),
        rtol=0,
        atol=2e-5,
    )
    assert not np.allclose(
        r.log_prob, naive_first_piece(albert_dir, [prompt], ["nurse", "cook"]), rtol=0, atol=1e-3
    )


def test_log_softmax_is_float64_exact(bert_dir, bert):
    """The engine's log probabilities equal a float64 log-softmax of the model's own logits
    to ~1e-15 (a float32 log-softmax is off by ~1e-7 for these logits)."""
    import torch
    from transformers import AutoTokenizer

    from biasamp.scoring._scorer import QuerySet, run_queries

    tok = AutoTokenizer.from_pretrained(bert_dir)
    ids = tuple(tok(f"he is a good {tok.mask_token}.")["input_ids"])
    pos = ids.index(tok.mask_token_id)
    targets = [tok.convert_tokens_to_ids(w) for w in ("nurse", "cook", "he", "the")]
    qs = QuerySet()
    for k, t in enumerate(targets):
        qs.add(ids, pos, t, k)
    got = run_queries(
        qs,
        model=bert.model,
        head=None,
        device=torch.device("cpu"),
        batch_size=4,
        pad_id=tok.pad_token_id,
    )
    with torch.no_grad():
        logits = bert.model(
            input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long)
        ).logits[0, pos]
    exact = torch.log_softmax(logits.double(), -1)[targets].numpy()
    f32 = torch.log_softmax(logits.float(), -1).double()[targets].numpy()
    assert np.max(np.abs(got - exact)) < 1e-13
    assert np.max(np.abs(f32 - exact)) > 1e-9  # the float32 path would not pass the check above


def test_a_score_cache_that_cannot_be_written_is_one_line(tmp_path):
    """A cache sqlite cannot write (a full disk, a read-only file: here sqlite's own
    query-only mode) is one line naming it and saying that what it holds is kept, not
    sqlite's traceback."""
    from biasamp.scoring._base import ScoreCache

    cache = ScoreCache(tmp_path / "c", {"model": "m"})
    cache.put_many([("a", [-1.0, -2.0])])
    cache._con.execute("PRAGMA query_only = ON")
    with pytest.raises(
        BiasampError,
        match=r"score_cache '.*scores-.*\.sqlite' cannot be "
        r"written \(attempt to write a readonly database\); "
        r"the 1 scores it holds are kept",
    ):
        cache.put_many([("b", [-3.0])])
    assert cache.get_many(["a", "b"]) == {"a": [-1.0, -2.0]}


def test_a_damaged_score_cache_is_set_aside_with_one_warning_and_started_afresh(tmp_path):
    """A cache file that is not a database (damaged, or another file under its name) is
    kept, renamed beside it, and a fresh cache is started: one warning, no traceback."""
    from biasamp._errors import DamagedCacheWarning
    from biasamp.scoring._base import ScoreCache

    cache = ScoreCache(tmp_path, {"model": "m"})
    path = cache.path
    cache.close()
    path.write_bytes(b"not a database " * 100)
    with pytest.warns(DamagedCacheWarning, match=r"could not be read \(file is not a database\)"):
        cache = ScoreCache(tmp_path, {"model": "m"})
    cache.put_many([("a", [-1.0])])
    assert cache.get_many(["a"]) == {"a": [-1.0]}
    aside = [p for p in tmp_path.iterdir() if p != path]
    assert [p.name.startswith(path.name + ".damaged-") for p in aside] == [True]
    assert aside[0].read_bytes() == b"not a database " * 100
