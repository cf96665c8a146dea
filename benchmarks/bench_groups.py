"""The table of docs/groups.md: BiasAmp-> of real causal LMs for gender (he/she) and for race
groups (white/black/asian), each against a uniform base (equal joint, the signs of the labor
table) and against the labor statistics (BLS CPS Table 11, 2022), both directions, with CIs.

Each cell is one ``biasamp probe`` run through the command line (``biasamp.cli.main``), whose
exact command is printed; the probes write their result folders under ``--out``, so every
number can be re-read (``biasamp report DIR``). Occupations: the paper's WinoBias-32 less
counselor and designer, which have no single Table 11 row (30 tasks). Gender: the
``adjectives`` templates (20) with he/she; race: the ``groups`` templates (22) with the three
race groups and all their realisations (7 candidates per prompt).

Models (``--model``, repeatable): a folder, or a name of ``scripts/fetch_models.py`` in the
model cache (``$BIASAMP_MODELS`` or ``~/.cache/biasamp/models``): ``smollm2-135m-instruct``,
``gemma-3-270m``, ``qwen2.5-coder-0.5b-instruct``. CPU, float32.

Usage::

    python benchmarks/bench_groups.py --model smollm2-135m-instruct --out /tmp/groups-bench
    python benchmarks/bench_groups.py --model smollm2-135m-instruct --model gemma-3-270m \\
        --model qwen2.5-coder-0.5b-instruct --out /tmp/groups-bench
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from biasamp.harness import BLS_TASKS

#: what each row probes: (attributes, template set, labor source)
PROBES = {
    "gender": ("he,she", "adjectives", "labor-2022"),
    "race": ("white,black,asian", "groups", "labor-2022-race"),
}


def model_dir(name: str) -> Path:
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    cache = Path(os.environ.get("BIASAMP_MODELS", "~/.cache/biasamp/models")).expanduser()
    return cache / name


def argv_of(model: Path, what: str, out: Path, args) -> list[str]:
    attributes, templates, labor = PROBES[what]
    argv = ["probe", "-q", "--model", str(model), "--templates", templates]
    argv += ["--attributes", attributes, "--tasks", args.tasks]
    argv += ["--base-rates", f"uniform:{labor},{labor}", "--n-resamples", str(args.n_resamples)]
    argv += ["--format", "md", "--out", str(out), "--overwrite"]
    if args.max_templates:
        argv += ["--max-templates", str(args.max_templates)]
    return argv


def main(argv=None) -> list[dict]:
    from biasamp import ProbeResult
    from biasamp.cli import main as cli

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", required=True)
    p.add_argument("--out", required=True, help="folder of the result folders")
    p.add_argument("--n-resamples", type=int, default=2000)
    p.add_argument("--max-templates", type=int, default=None, help="quick runs only")
    p.add_argument("--tasks", default=BLS_TASKS)
    p.add_argument("--only", choices=sorted(PROBES), default=None)
    args = p.parse_args(argv)
    rows = []
    for name in args.model:
        model = model_dir(name)
        for what in [args.only] if args.only else list(PROBES):
            out = Path(args.out) / f"{model.name}-{what}"
            command = argv_of(model, what, out, args)
            print("$ biasamp " + " ".join(command), flush=True)
            t0 = time.perf_counter()
            rc = cli(command)
            seconds = time.perf_counter() - t0
            if rc != 0:
                raise SystemExit(f"probe failed ({rc}): {' '.join(command)}")
            r = ProbeResult.load(out, tables=False)
            for s in r.summary.itertuples(index=False):
                rows.append(
                    {
                        "model": model.name,
                        "attributes": what,
                        "base": "uniform" if s.base_rates.startswith("uniform:") else "labor",
                        "direction": "A->T" if s.direction == "attribute_to_task" else "T->A",
                        "biasamp": s.mean,
                        "ci_low": s.ci_low,
                        "ci_high": s.ci_high,
                        "seconds": seconds,
                    }
                )
            print(f"  {seconds:.0f} s", flush=True)
    print("\n| model | attributes | base | direction | BiasAmp-> [95% CI] | probe s |")
    print("|---|---|---|---|---|---:|")
    for x in rows:
        print(
            f"| {x['model']} | {x['attributes']} | {x['base']} | {x['direction']} | "
            f"{x['biasamp']:+.4f} [{x['ci_low']:+.4f}, {x['ci_high']:+.4f}] | {x['seconds']:.0f} |"
        )
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
