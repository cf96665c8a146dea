"""Simulation: how often the CI of a count-based base rate covers the true BiasAmp->.

Why it exists: biasamp resamples the counts of a count-based source (a multinomial bootstrap
of its counted sentences, :mod:`biasamp.pipeline.resample`) and reports the percentile
interval. BiasAmp-> is not linear in the base table (a cell whose association flips sign
turns its contribution around), so the replicates can be biased and the interval can miss.
This script measures it where the truth is known.

Design, per direction and per (sentences N, occupations K): ``--truths`` true joints ``p``
over K x 2 cells (Dirichlet(1), seeded), each with a fixed random model table; the true value
is BiasAmp-> of the model against ``p``. For each truth, ``--datasets`` data sets draw counts
``~ Multinomial(N, p)``,
computes the point (BiasAmp-> against the counts) and ``--resamples`` base replicates with
biasamp's own :func:`~biasamp.pipeline.resample.resample_counts` and
:func:`~biasamp.pipeline.resample.replicates`; then checks whether each interval holds the
truth:

* ``percentile`` (what biasamp reports: :func:`~biasamp.pipeline.resample.interval`);
* ``basic`` (``2 * point - q_hi, 2 * point - q_lo``);
* ``bias-corrected`` (Efron's BC: percentiles shifted by ``z0 = Phi^-1(share of replicates
  below the point)``).

It also prints the mean of ``base_bias`` (mean of the replicates minus the point, the
summary's field) and the share of data sets whose |base_bias| reaches ``NOTABLE_BIAS`` x the
CI width, where the report warns that the CI is not reliable, and the percentile interval's
coverage among the data sets it does not flag.

Run: ``python benchmarks/sim_base_coverage.py [--truths 4] [--datasets 200]
[--resamples 1000]`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import warnings
from statistics import NormalDist

import numpy as np

from biasamp.pipeline.resample import interval, replicates, resample_counts, sign_support
from biasamp.report._sections import NOTABLE_BIAS

DESIGNS = ((100, 8), (400, 8), (4000, 8), (300, 32))
DIRECTIONS = ("task_to_attribute", "attribute_to_task")


def _bc(reps: np.ndarray, point: float, conf: float) -> tuple[float, float]:
    nd = NormalDist()
    r = reps[np.isfinite(reps)]
    share = np.clip(np.mean(r < point), 1e-6, 1 - 1e-6)
    z0, z = nd.inv_cdf(share), nd.inv_cdf((1 + conf) / 2)
    lo, hi = nd.cdf(2 * z0 - z), nd.cdf(2 * z0 + z)
    return tuple(np.nanpercentile(r, [100 * lo, 100 * hi]))


def simulate(
    direction: str,
    n: int,
    k: int,
    *,
    truths: int,
    datasets: int,
    resamples: int,
    conf: float = 0.95,
) -> dict:
    hits = {"percentile": 0, "basic": 0, "bias-corrected": 0}
    biases, flagged, unflagged_hits, used = [], 0, 0, 0
    supported, supported_hits = 0, 0
    for t in range(truths):
        rng = np.random.default_rng([n, k, t])
        p = rng.dirichlet(np.ones(2 * k)).reshape(k, 2)
        x = rng.random((k, 2)) + 0.1
        model = x / x.sum(axis=1 if direction == "task_to_attribute" else 0, keepdims=True)
        truth = replicates(model[None], p, direction=direction, metric={})["value"][0]
        for i in range(datasets):
            c = rng.multinomial(n, p.ravel()).reshape(k, 2).astype(float)
            at_point = replicates(model[None], c, direction=direction, metric={})
            point = at_point["value"][0]
            if not np.isfinite(point):
                continue
            draws = resample_counts(c, n_resamples=resamples, seed=i, stream=t)
            rep = replicates(
                np.broadcast_to(model, (resamples, k, 2)),
                c,
                direction=direction,
                metric={},
                base_draws=draws,
                to_joint=lambda z: z,
            )
            support = sign_support(rep["y"], at_point["y"][0], ~np.isnan(rep["contribution"]))
            all_supported = bool((support >= conf).all())
            reps = rep["value"]
            lo, hi = interval(reps, conf, point)
            ivs = {
                "percentile": (lo, hi),
                "basic": (2 * point - hi, 2 * point - lo),
                "bias-corrected": _bc(reps, point, conf),
            }
            for name, (a, b) in ivs.items():
                hits[name] += a <= truth <= b
            bias = float(np.nanmean(reps) - point)
            biases.append(bias)
            flag = abs(bias) >= NOTABLE_BIAS * (hi - lo)
            flagged += flag
            unflagged_hits += (not flag) and lo <= truth <= hi
            supported += all_supported
            supported_hits += all_supported and lo <= truth <= hi
            used += 1
    return {
        "direction": direction,
        "sentences": n,
        "occupations": k,
        "datasets": used,
        "coverage": {m: h / used for m, h in hits.items()},
        "mean_base_bias": float(np.mean(biases)),
        "flagged": flagged / used,
        "coverage_unflagged": (
            unflagged_hits / (used - flagged) if used > flagged else float("nan")
        ),
        "all_supported": supported / used,
        "coverage_all_supported": (supported_hits / supported if supported else float("nan")),
    }


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--truths", type=int, default=4)
    ap.add_argument("--datasets", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d in DIRECTIONS:
            for n, k in DESIGNS:
                r = simulate(
                    d, n, k, truths=args.truths, datasets=args.datasets, resamples=args.resamples
                )
                rows.append(r)
                cov = "  ".join(f"{m} {v:.2f}" for m, v in r["coverage"].items())
                print(
                    f"{d:18s} N={n:5d} K={k:2d}  coverage: {cov}  "
                    f"mean base_bias {r['mean_base_bias']:+.4f}  flagged {r['flagged']:.2f}  "
                    f"percentile when not flagged {r['coverage_unflagged']:.2f}  "
                    f"every sign supported {r['all_supported']:.2f}, then percentile "
                    f"{r['coverage_all_supported']:.2f}"
                )
    print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
