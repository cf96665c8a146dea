"""The race groups' probe on real models against an independent plain-transformers computation
(issue 30's "done when" for Gemma-3-270M and Qwen2.5-Coder-0.5B; SmolLM2 and a tiny model are
checked by tests/test_real_groups.py with the same reference).

For each model: ``biasamp.probe`` with the race groups (white/black/asian, all 7 realisations)
of the ``groups`` templates (the first 2: "new", "known"), 4 occupations (nurse, developer,
janitor, cook) and ``uniform:labor-2022-race`` + ``labor-2022-race``, CPU, float32; then the
reference of ``tests/naive_groups.py`` (sentences written out by hand, one plain
``AutoModelForCausalLM`` float32 call per filled sentence after the model's document-start
token, float64 log-softmax, realisations summed and renormalised). Printed per model: the max
absolute difference of P(group | task), P(task | group) and BiasAmp-> (both sources and
directions), and whether it is within ``--atol`` (float32: 1e-4). The check also asserts that
every realisation is in the tokenisation audit and that each direction has a finite CI.

Models (``--model``, repeatable): a folder, or a name of ``scripts/fetch_models.py`` in the
model cache (``$BIASAMP_MODELS`` or ``~/.cache/biasamp/models``), each with its context token
(``--model NAME=TOKEN`` for another model).

Usage::

    python benchmarks/bench_groups_naive.py --model gemma-3-270m \\
        --model qwen2.5-coder-0.5b-instruct --out /tmp/groups-naive
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_groups import model_dir  # noqa: E402  (same folder)

from naive_groups import differences, naive_tables, probe_race  # noqa: E402  (tests/)

#: the document-start token each fetched model is probed after (tests/test_real_models.py)
CONTEXT = {
    "smollm2-135m-instruct": "<|endoftext|>",
    "gemma-3-270m": "<bos>",
    "qwen2.5-coder-0.5b-instruct": "<|endoftext|>",
}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", required=True, help="NAME, DIR or DIR=TOKEN")
    p.add_argument("--out", default=None, help="folder of the result folders (default: temp)")
    p.add_argument("--atol", type=float, default=1e-4)
    args = p.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="groups-naive-"))
    rows = []
    for spec in args.model:
        name, _, token = spec.partition("=")
        path = model_dir(name)
        context = token or CONTEXT[path.name]
        t0 = time.perf_counter()
        r = probe_race(path, out / path.name)
        t1 = time.perf_counter()
        probed = r.provenance.scorer.context.token  # the same document start on both sides
        diff = differences(r, *naive_tables(path, context))
        t2 = time.perf_counter()
        rows.append(
            {
                "model": path.name,
                "context": context,
                **diff,
                "probe_s": t1 - t0,
                "naive_s": t2 - t1,
                "ok": max(diff.values()) <= args.atol and probed == context,
            }
        )
        print(rows[-1], flush=True)
    print(
        f"\n| model | context | max abs diff P(group \\| task) | P(task \\| group) | BiasAmp-> | "
        f"within {args.atol:g} | probe s | reference s |"
    )
    print("|---|---|---:|---:|---:|---|---:|---:|")
    for x in rows:
        print(
            f"| {x['model']} | `{x['context']}` | {x['P(group|task)']:.2e} | "
            f"{x['P(task|group)']:.2e} | {x['BiasAmp']:.2e} | {'yes' if x['ok'] else 'NO'} | "
            f"{x['probe_s']:.0f} | {x['naive_s']:.0f} |"
        )
    return rows


if __name__ == "__main__":
    sys.exit(0 if all(r["ok"] for r in main()) else 1)
