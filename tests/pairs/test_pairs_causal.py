"""CrowS-Pairs on causal LMs: whole-sentence log-likelihoods against a naive plain-transformers
loop, lm-evaluation-harness' metrics on hand-made scores, and equality with the harness's own
``crows_pairs_english`` task run on a local copy of the pairs (its ``hf`` backend, the same
context token, its logits cache off) on a tiny GPT-2 and on the real SmolLM2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp._files import data_dir
from biasamp.cli import main
from biasamp.pairs import PairResult, pair_summary, score_pairs
from biasamp.pairs._run import preferences

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CROWS = data_dir("pairs") / "crows_pairs_anonymized.csv"


@pytest.fixture(scope="module")
def long_gpt2_dir(tmp_path_factory):
    """The tiny GPT-2 with room for CrowS-Pairs' longest sentence (136 of its tokens)."""
    from tiny_models import make_tiny_gpt2

    path = tmp_path_factory.mktemp("long-gpt2")
    make_tiny_gpt2(path, n_positions=256)
    return path


def first_pairs(tmp_path, n):
    """A copy of the first ``n`` CrowS-Pairs rows (the file's own bytes, header included)."""
    lines = CROWS.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / f"crows-{n}.csv"
    path.write_text("".join(lines[: n + 1]), encoding="utf-8")
    assert len(pd.read_csv(path)) == n  # no sentence spans two lines
    return path


def naive_log_likelihood(path, texts, context, dtype=torch.float64):
    """One full-model call per sentence: ``context`` token, then the sentence's tokens (no
    special tokens); the sum of every sentence token's log-softmax."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
    out = []
    for text in texts:
        ids = [tok.convert_tokens_to_ids(context), *tok(text, add_special_tokens=False).input_ids]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].double()
        lp = torch.log_softmax(logits, -1)
        out.append(sum(float(lp[t - 1, ids[t]]) for t in range(1, len(ids))))
    return np.array(out)


# ---------------------------------------------------------------------------------------
# lm-evaluation-harness' metrics, by hand
# ---------------------------------------------------------------------------------------


def test_harness_metrics_on_hand_made_log_likelihoods():
    scores = pd.DataFrame(
        {
            "bias_type": ["age", "age", "age", "gender"],
            "direction": ["stereo", "antistereo", "stereo", "antistereo"],
            "score_more": [-10.0, -12.0, -7.0, -3.0004],
            "score_less": [-11.0, -11.5, -7.0, -3.0001],
        }
    )
    pref, neutral = preferences(scores["score_more"], scores["score_less"])
    s = pair_summary(
        scores.assign(more_preferred=pref, neutral=neutral), n_resamples=50, log_likelihoods=True
    ).set_index("group")
    # higher: yes, no, no (a tie is not a preference), no; the direction is not looked at
    assert s.loc["all", "pct_stereotype"] == 0.25
    assert s.loc["all", "likelihood_diff"] == pytest.approx((1.0 + 0.5 + 0.0 + 0.0003) / 4)
    assert s.loc["antistereo", "pct_stereotype"] == 0.0
    assert s.loc["antistereo", "likelihood_diff"] == pytest.approx((0.5 + 0.0003) / 2)
    assert s.loc["age", "pct_stereotype"] == 1 / 3 and s.loc["gender", "likelihood_diff"] == (
        pytest.approx(0.0003)
    )
    # the original metric beside them: rounded to 3 decimals, the last pair is neutral
    assert s.loc["all", "share_more"] == 0.25 and s.loc["all", "n_neutral"] == 2
    # a masked LM's summary has no such columns
    plain = pair_summary(scores.assign(more_preferred=pref, neutral=neutral), n_resamples=50)
    assert "pct_stereotype" not in plain and "likelihood_diff" not in plain


# ---------------------------------------------------------------------------------------
# biasamp against a naive loop
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_scorer(long_gpt2_dir):
    from biasamp.scoring import CausalLMScorer

    return CausalLMScorer(long_gpt2_dir, device="cpu", batch_size=8, dtype="float64")


def test_sentence_log_likelihoods_equal_a_naive_loop(gpt2_scorer, long_gpt2_dir):
    df = pd.read_csv(CROWS, nrows=12)
    texts = [*df["sent_more"], *df["sent_less"], df["sent_more"][0]]  # one repeated
    n_run = gpt2_scorer.count_sentences(texts)
    calls = gpt2_scorer.n_forward_calls
    got = gpt2_scorer.score_sentences(texts)
    assert n_run == 24 and gpt2_scorer.n_forward_calls > calls
    ref = naive_log_likelihood(long_gpt2_dir, texts, "<|endoftext|>")
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)
    assert got[-1] == got[0]


def test_score_pairs_on_a_causal_model(gpt2_scorer, long_gpt2_dir, tmp_path):
    res = score_pairs("crows-pairs", gpt2_scorer, max_pairs=30, n_resamples=200)
    sc, s = res.scores, res.summary.set_index("group")
    ref_more = naive_log_likelihood(long_gpt2_dir, list(sc["sent_more"]), "<|endoftext|>")
    np.testing.assert_allclose(sc["score_more"], ref_more, rtol=0, atol=1e-9)
    assert sc["n_shared"].isna().all()  # a masked LM's count
    diff = sc["score_more"].to_numpy() - sc["score_less"].to_numpy()
    assert s.loc["all", "pct_stereotype"] == (diff > 0).mean()
    assert s.loc["all", "likelihood_diff"] == pytest.approx(np.abs(diff).mean(), abs=1e-12)
    assert s.loc["all", "share_more"] == sc["more_preferred"].mean()
    prov = res.provenance
    assert prov.model.model_type == "causal" and prov.scorer.context.token == "<|endoftext|>"
    assert prov.scorer.estimator.startswith("log-likelihood of the whole sentence")
    assert (prov.n_contexts, prov.n_contexts_run) == (60, 60)
    for bad in ({"context_token": "<|endoftext|>"}, {"model_type": "masked"}):
        with pytest.raises(BiasampError, match="a causal scorer already loaded"):
            score_pairs("crows-pairs", gpt2_scorer, max_pairs=2, **bad)
    back = PairResult.load(res.save(tmp_path / "r"))
    pd.testing.assert_frame_equal(back.summary, res.summary, check_dtype=False)
    assert back.provenance == prov
    # the harness's metrics are a causal LM's: required there, refused in a masked LM's file
    f = tmp_path / "r" / "pairs.json"
    doc = json.loads(f.read_text())
    row = {k: v for k, v in doc["summary"][0].items() if k != "likelihood_diff"}
    f.write_text(json.dumps({**doc, "summary": [row]}))
    with pytest.raises(BiasampError, match=r"summary\[0\] lacks the keys \['pct_stereotype'"):
        PairResult.load(tmp_path / "r")
    masked = {**doc["provenance"], "model": {**doc["provenance"]["model"], "model_type": "masked"}}
    f.write_text(json.dumps({**doc, "provenance": masked}))
    with pytest.raises(BiasampError, match=r"summary\[0\] must not hold the keys"):
        PairResult.load(tmp_path / "r")


def test_pairs_command_on_a_causal_model(long_gpt2_dir, tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["pairs", "-m", str(long_gpt2_dir), "--max-pairs", "8", "--n-resamples", "50"]
    assert main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "8 pairs of crows-pairs (16 sentences" in text and "'<|endoftext|>'" in text
    assert "pct_stereotype" in text and "likelihood_diff" in text
    res = PairResult.load(out)
    assert list(res.summary.columns[-2:]) == ["pct_stereotype", "likelihood_diff"]
    # a context token for a masked model, and a causal model forced to be masked: one line
    assert main([*argv, "--model-type", "masked"]) == 2
    assert "model_type 'masked' does not fit" in capsys.readouterr().err


def test_a_context_token_is_for_causal_models(tiny_bench_bert_dir, capsys):
    argv = ["pairs", "-m", str(tiny_bench_bert_dir), "--context-token", "[CLS]"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "context_token is for causal language models" in err and err.count("\n") == 1


def test_score_pairs_runs_the_early_checks_before_loading(tiny_bench_bert_dir, monkeypatch):
    """The Python call refuses a context token for a masked model as the command does (the
    one early-check pass, scoring.preflight), before any weights load."""
    import biasamp.scoring

    def no_load(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(biasamp.scoring, "load_scorer", no_load)
    with pytest.raises(BiasampError, match="context_token is for causal language models"):
        score_pairs("crows-pairs", str(tiny_bench_bert_dir), max_pairs=2, context_token="[CLS]")


# ---------------------------------------------------------------------------------------
# equality with lm-evaluation-harness' own task
# ---------------------------------------------------------------------------------------


def harness_crows(model, pairs_csv, tmp_path, **model_args):
    """lm-evaluation-harness' ``crows_pairs_english`` (its own YAML and utils, included) on a
    local CSV: per pair (ll(sent_more), ll(sent_less)) in file order, and its two metrics."""
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    task = tmp_path / "tasks" / "crows_local.yaml"
    task.parent.mkdir()
    upstream = json.dumps(
        str(Path(lm_eval.__file__).parent / "tasks" / "crows_pairs" / "crows_pairs_english.yaml")
    )
    task.write_text(
        f"include: {upstream}\n"
        "task: crows_pairs_english_local\n"
        "tag: []\n"
        "dataset_path: csv\n"
        "dataset_name: null\n"
        "dataset_kwargs:\n"
        f"  data_files: {{test: {json.dumps(str(pairs_csv))}}}\n"
        f"  cache_dir: {json.dumps(str(tmp_path / 'datasets'))}\n"
    )
    out = simple_evaluate(
        model="hf",
        model_args={"pretrained": str(model), "logits_cache": False, **model_args},
        tasks=["crows_pairs_english_local"],
        task_manager=TaskManager(include_path=str(task.parent), include_defaults=False),
        device="cpu",
        batch_size=16,
        bootstrap_iters=0,
        log_samples=True,
    )
    samples = sorted(out["samples"]["crows_pairs_english_local"], key=lambda d: d["doc_id"])
    ll = np.array([[r[0] for r in d["filtered_resps"]] for d in samples])
    res = out["results"]["crows_pairs_english_local"]
    return ll, res["pct_stereotype,none"], res["likelihood_diff,none"]


def test_tiny_gpt2_equals_the_harness_task(long_gpt2_dir, tmp_path):
    from biasamp.scoring import LoadOptions

    # float64 on both sides: equal to rounding
    pairs_csv = first_pairs(tmp_path, 120)
    res = score_pairs(
        pairs_csv, long_gpt2_dir, options=LoadOptions(dtype="float64"), n_resamples=50
    )
    theirs, pct, diff = harness_crows(long_gpt2_dir, pairs_csv, tmp_path, dtype="float64")
    ours = res.scores[["score_more", "score_less"]].to_numpy()
    assert theirs.shape == ours.shape == (120, 2)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    row = res.summary.iloc[0]
    gaps = np.abs(ours[:, 0] - ours[:, 1])
    assert gaps.min() > 1e-6  # no near-tie that rounding could flip
    assert row["pct_stereotype"] == pct and abs(row["likelihood_diff"] - diff) < 1e-9
    assert 0.2 < pct < 0.8 and diff > 1.0  # a real comparison, not all one way


@pytest.mark.filterwarnings("ignore::biasamp.ChatModelWarning")
@pytest.mark.filterwarnings("ignore::biasamp.UnavailableCIWarning")  # a bias type of one pair
def test_smollm2_equals_the_harness_task(smollm2_dir, tmp_path):
    """float32, as a user runs it: each sentence's log-likelihood within float32 rounding of a
    sum over about 20-60 tokens; the harness is given biasamp's context token (its own default
    would be SmolLM2-Instruct's bos_token, the chat marker <|im_start|>). 30 pairs: the tiny
    GPT-2 above compares 120 to 1e-9; the real model adds its context token and float32."""
    pairs_csv = first_pairs(tmp_path, 30)
    res = score_pairs(pairs_csv, smollm2_dir, n_resamples=50)
    assert res.provenance.scorer.context.token == "<|endoftext|>"
    tok = transformers.AutoTokenizer.from_pretrained(smollm2_dir)
    assert tok.bos_token == "<|im_start|>"
    theirs, pct, diff = harness_crows(
        smollm2_dir,
        pairs_csv,
        tmp_path,
        dtype="float32",
        prefix_token_id=tok.convert_tokens_to_ids("<|endoftext|>"),
    )
    ours = res.scores[["score_more", "score_less"]].to_numpy()
    assert theirs.shape == ours.shape == (30, 2)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-3)
    gaps = np.abs(ours[:, 0] - ours[:, 1])
    assert gaps.min() > 4e-3  # no pair whose order float32 rounding could flip
    row = res.summary.iloc[0]
    assert row["pct_stereotype"] == pct and abs(row["likelihood_diff"] - diff) < 1e-3
