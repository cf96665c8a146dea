"""Throughput of biasamp's corpus counter vs a straightforward line-by-line §4 counter.

Builds a ~20+ MB text by repeating the WikiText-103 and WikiText-2 valid/test files (in
``../shared/data/wikitext`` or ``--data``), then times, in the same process:

* baseline: the paper's rule (reference-semantics §4) written line by line, one core;
* ``count_cooccurrences(rule="wang2021")`` with all cores (checked equal to the baseline);
* ``count_cooccurrences(rule="default")`` with all cores.

Prints MB/s for each and the ratios to the baseline.

    python benchmarks/bench_corpus.py [--mb 24] [--jobs N] [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from biasamp.corpus import WANG2021_WORD_GROUPS, count_cooccurrences
from biasamp.tasks import load_tasks


def baseline(path, occupations, groups):
    """The §4 rule, line by line, as a plain script would write it."""
    matrix = np.zeros((len(occupations), len(groups)))
    with open(path, encoding="utf-8") as f:
        for line in f:
            if "=" in line:
                continue
            for sent in line.split("."):
                index_i = None
                for i, occ in enumerate(occupations):
                    if occ in sent:
                        if index_i is not None:
                            index_i = None
                            continue
                        index_i = i
                if index_i is None:
                    continue
                words = set(sent.split(" "))
                index_j = None
                for j, gend in enumerate(groups):
                    if len(set(gend) & words) > 0:
                        if index_j is not None:
                            if j != 2:
                                index_j = None
                            continue
                        index_j = j
                if index_j is None:
                    continue
                matrix[index_i][index_j] += 1
    return matrix


def main() -> None:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=24.0, help="approximate corpus size in MB")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes")
    ap.add_argument("--data", default=str(here.parent / "shared" / "data" / "wikitext"))
    args = ap.parse_args()

    sources = sorted(Path(args.data).glob("wikitext-*/wiki.*.tokens"))
    if not sources:
        raise SystemExit(f"no WikiText files under {args.data}")
    base = "".join(p.read_text(encoding="utf-8") for p in sources)
    reps = max(1, round(args.mb * 1e6 / len(base.encode("utf-8"))))
    tmp = Path(tempfile.mkdtemp()) / "corpus.txt"
    tmp.write_text(base * reps, encoding="utf-8")
    mb = tmp.stat().st_size / 1e6
    tasks = load_tasks("winobias32").words
    groups = list(WANG2021_WORD_GROUPS.values())
    print(f"corpus: {mb:.1f} MB ({len(sources)} WikiText files x {reps}); cores: "
          f"{os.cpu_count()}, jobs: {args.jobs}; tasks: winobias32")

    t0 = time.perf_counter()
    ref = baseline(tmp, tasks, groups)
    t_base = time.perf_counter() - t0
    print(f"baseline line-by-line §4 (1 core): {t_base:7.2f} s  {mb / t_base:7.1f} MB/s")

    for rule in ("wang2021", "default"):
        t0 = time.perf_counter()
        res = count_cooccurrences(tmp, tasks, rule=rule, n_jobs=args.jobs)
        dt = time.perf_counter() - t0
        check = ""
        if rule == "wang2021":
            same = np.array_equal(res.counts.to_numpy(), ref)
            check = "  (counts == baseline)" if same else "  (COUNTS DIFFER FROM BASELINE!)"
        print(f"biasamp rule={rule:8s} ({args.jobs} jobs): {dt:7.2f} s  {mb / dt:7.1f} MB/s  "
              f"ratio vs baseline {t_base / dt:5.1f}x{check}")
    tmp.unlink()


if __name__ == "__main__":
    main()
