"""Benchmark: the probe's model-free stage (probability tables -> BiasAmp-> summary with CIs).

Compares, in the same process, for ``n_templates`` templates x 32 occupations x he/she and the
base sources uniform, labor-2016 and wikitext103-valtest (both directions):
  (1) ``biasamp.pipeline.evaluate_tables`` (metric per template, vectorised bootstrap over
      templates for the headline and for every (task, attribute) cell), and
  (2) a straightforward baseline: per-cell Python loops for every template's BiasAmp-> (the
      paper's formula) and a per-cell Python bootstrap loop (mean of a resample, 10,000 times),
and checks that the per-template values and means agree (CIs use different random streams).
Run: ``python benchmarks/bench_probe.py [--templates N] [--resamples N]``.
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np

from biasamp import base_rates
from biasamp.pipeline import evaluate_tables
from biasamp.tasks import load_tasks

SOURCES = ("uniform", "labor-2016", "wikitext103-valtest")
ATTRS = ["he", "she"]


def baseline(tables_at, tables_ta, tasks, n_resamples, seed):
    """Per-cell loops: values per template, then a Python bootstrap per cell and headline."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in SOURCES:
        src = base_rates.get_source(name)
        for direction, tables in (
            ("attribute_to_task", tables_at),
            ("task_to_attribute", tables_ta),
        ):
            tab = src.table(tasks, ATTRS, direction=direction)
            B = tab.joint.to_numpy(dtype=float)
            S = None if tab.association is None else tab.association.to_numpy(dtype=float)
            n_t, n_a = B.shape
            total = sum(B[i][j] for i in range(n_t) for j in range(n_a))
            col = [sum(B[i][j] for i in range(n_t)) for j in range(n_a)]
            row = [sum(B[i][j] for j in range(n_a)) for i in range(n_t)]
            values, contribs = [], []
            for M in tables:
                cells = []
                for i in range(n_t):
                    for j in range(n_a):
                        if row[i] == 0 or col[j] == 0:
                            y = 0.0 if direction == "attribute_to_task" else float("nan")
                        else:
                            y = (
                                S[i][j]
                                if S is not None
                                else np.sign(B[i][j] / col[j] - row[i] / total)
                            )
                        base = (
                            B[i][j] / col[j]
                            if direction == "attribute_to_task"
                            else (B[i][j] / row[i] if row[i] else float("nan"))
                        )
                        cells.append(y * (M[i][j] - base))
                contribs.append(cells)
                finite = [c for c in cells if not np.isnan(c)]
                values.append(sum(finite) / len(finite))
            k = len(values)
            boot = sorted(
                sum(values[rng.integers(k)] for _ in range(k)) / k for _ in range(n_resamples)
            )
            cells_ci = []
            for c in range(n_t * n_a):
                col_vals = [contribs[t][c] for t in range(k)]
                if col_vals[0] != col_vals[0]:
                    cells_ci.append((float("nan"), float("nan")))
                    continue
                b = sorted(
                    sum(col_vals[rng.integers(k)] for _ in range(k)) / k for _ in range(n_resamples)
                )
                cells_ci.append((b[int(0.025 * n_resamples)], b[int(0.975 * n_resamples) - 1]))
            out[(name, direction)] = (
                values,
                (boot[int(0.025 * n_resamples)], boot[int(0.975 * n_resamples) - 1]),
                cells_ci,
            )
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--templates", type=int, default=100)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument(
        "--baseline-resamples",
        type=int,
        default=200,
        help="resamples for the (slow) baseline; its time is scaled linearly to --resamples",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # the sparse Wikipedia table warns about undefined rows
    logging.disable(logging.WARNING)
    tasks = list(load_tasks("winobias32").words)
    rng = np.random.default_rng(0)
    at = rng.dirichlet(np.ones(len(tasks)), size=(args.templates, 2)).transpose(0, 2, 1)
    ta = rng.dirichlet(np.ones(2), size=(args.templates, len(tasks)))
    sources = list(SOURCES)
    for name in sources:  # warm the base tables (file reads) outside the timings
        for d in ("attribute_to_task", "task_to_attribute"):
            base_rates.get_source(name).table(tasks, ATTRS, direction=d)

    t0 = time.perf_counter()
    ev = evaluate_tables(at, ta, tasks, ATTRS, sources, n_resamples=args.resamples, seed=0)
    t_fast = time.perf_counter() - t0

    nb = min(args.baseline_resamples, args.resamples)
    t0 = time.perf_counter()
    ref = baseline(at, ta, tasks, nb, 0)
    t_base = time.perf_counter() - t0
    t_base_scaled = t_base * args.resamples / nb  # the baseline is ~linear in resamples

    worst = 0.0
    for rec in ev.summary.to_dict("records"):
        vals = ref[(rec["base_rates"], rec["direction"])][0]
        worst = max(worst, float(np.max(np.abs(np.array(rec["per_template"]) - vals))))
    assert worst < 1e-12, worst

    print(
        f"{args.templates} templates x 32 tasks x 2 attributes, sources {', '.join(SOURCES)}, "
        f"both directions, {args.resamples} bootstrap resamples"
    )
    print(f"evaluate_tables:          {t_fast:8.3f} s")
    print(
        f"per-cell loops baseline:  {t_base_scaled:8.3f} s"
        + (
            f" (measured {t_base:.3f} s with {nb} resamples, scaled linearly)"
            if nb != args.resamples
            else ""
        )
    )
    print(f"speed-up:                 {t_base_scaled / t_fast:8.1f}x")
    print(f"max |per-template difference| = {worst:.2e}")


if __name__ == "__main__":  # pragma: no cover
    main()
