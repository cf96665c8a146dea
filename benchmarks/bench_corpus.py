"""Throughput of biasamp's corpus counter vs line-by-line references, per rule and engine.

Builds a ~24 MB text by repeating WikiText-103 valid + test (the repository's own copies,
``tests/data/wikitext-103/*.tokens.gz``, or ``--data DIR`` with ``*.tokens[.gz]`` files), then
times, in the same process, on the same file:

* ``baseline``: the paper's rule (reference-semantics §4) written line by line, one core;
* ``plain``: each rule's own line-by-line reference (``CountingRule.count(lines,
  fast=False)``, the implementation the engine is tested against), one core;
* ``count_cooccurrences`` for each rule: local engine with 1 job and with all cores, and
  (when ``dask[distributed]`` is installed) the Dask engine on a LocalCluster of 1 and of 2
  worker processes (cluster start-up not timed, reported apart);
* ``--matchers``: the candidate multi-pattern scanners on the winobias32 occupations;
* ``--formats``: each corpus format (compressed, JSON Lines, Parquet, a Wikipedia XML dump
  made from the same articles), one core.

Every count is checked equal to the reference. Prints wall-clock MB/s, MB per CPU second
(= MB/s per core: the CPU time of this process and of its pool workers, so other programs on
the machine do not distort it) and the per-core ratio to the baseline (both sides printed).
Timings are the best of ``--repeat`` runs.

    python benchmarks/bench_corpus.py [--mb 24] [--jobs N] [--repeat 3] [--no-dask]
                                      [--matchers] [--formats] [--data DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from biasamp.corpus import RULES, WANG2021_WORD_GROUPS, count_cooccurrences
from biasamp.tasks import load_tasks

HERE = Path(__file__).resolve().parent.parent


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


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (pool workers)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best_of(repeat, fn):
    """(best wall seconds, best CPU seconds, result) over ``repeat`` runs."""
    best, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), _cpu()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, _cpu() - c0)
    return best, best_cpu, out


def read_sources(data: str | None) -> tuple[str, list[str]]:
    folder = Path(data) if data else HERE / "tests" / "data" / "wikitext-103"
    files = sorted(folder.glob("*.tokens.gz")) + sorted(folder.glob("*.tokens"))
    if not files:
        raise SystemExit(f"no *.tokens[.gz] files under {folder}")
    texts = [
        (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()).decode("utf-8")
        for p in files
    ]
    return "".join(texts), [p.name for p in files]


def matchers(text: bytes, tasks: list[str], repeat: int) -> None:
    """Time the scanner candidates (installed ones) finding the occupations."""
    import re

    from biasamp.corpus._matching import HyperscanScanner, NumpyScanner

    mb = len(text) / 1e6
    pats = [t.encode() for t in tasks]
    cands = {
        "hyperscan": lambda: HyperscanScanner(pats).find(text).size,
        "numpy KeyIndex": lambda: NumpyScanner(pats).find(text).size,
        "re (trie)": lambda: sum(1 for _ in re.finditer(b"|".join(pats), text)),
    }
    try:
        import ahocorasick_rs

        ac = ahocorasick_rs.BytesAhoCorasick(pats)
        cands["ahocorasick-rs (bytes)"] = lambda: len(ac.find_matches_as_indexes(text))
    except ImportError:
        pass
    try:
        import re2

        r2 = re2.compile(b"|".join(re.escape(p) for p in pats))
        cands["google-re2"] = lambda: sum(1 for _ in r2.finditer(text))
    except ImportError:
        pass
    try:
        import ahocorasick

        auto = ahocorasick.Automaton()
        for i, t in enumerate(tasks):
            auto.add_word(t, i)
        auto.make_automaton()
        s = text.decode("utf-8")
        cands["pyahocorasick (str)"] = lambda: sum(1 for _ in auto.iter(s))
    except ImportError:
        pass
    try:
        import polars as pl

        lines = pl.Series(text.decode("utf-8").split("\n"))
        cands["polars contains_any (lines)"] = lambda: int(lines.str.contains_any(tasks).sum())
    except ImportError:
        pass
    print(f"\nmatchers: the {len(tasks)} occupations over {mb:.1f} MB (1 core, best of {repeat})")
    for name, fn in cands.items():
        fn()  # compile / warm up
        _, cpu, n = best_of(repeat, fn)
        print(
            f"  {name:28s} {cpu / mb * 1e3:7.2f} CPU ms/MB  {mb / cpu:8.1f} MB per CPU s  "
            f"({n} hits)"
        )


def _dump(text: str) -> bytes:
    """A MediaWiki XML dump of the WikiText articles, with some markup per paragraph."""
    from xml.sax.saxutils import escape

    pages, title, body = [], None, []
    for line in text.split("\n"):
        if line.startswith(" = ") and not line.startswith(" = = "):
            if title:
                pages.append((title, "\n".join(body)))
            title, body = line.strip(" ="), ["{{Infobox|name=" + line.strip(" =") + "}}"]
        elif line.strip().startswith("="):
            level = line.count("=") // 2
            body.append("=" * level + " " + line.strip(" =") + " " + "=" * level)
        elif line.strip():
            body.append(line.replace(" , ", " , [[link]] ", 1) + "<ref>{{cite|x=1}}</ref>")
    if title:
        pages.append((title, "\n".join(body)))
    xml = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">']
    for i, (t, b) in enumerate(pages):
        xml.append(
            f"<page><title>{escape(t)}</title><ns>0</ns><id>{i}</id><revision>"
            f'<text xml:space="preserve">{escape(b)}</text></revision></page>'
        )
    xml.append("</mediawiki>\n")
    return "\n".join(xml).encode("utf-8")


def formats(text: str, tasks: list[str], repeat: int, tmpdir: Path) -> None:
    """Single-core throughput of each corpus format (MB of the plain text per second)."""
    import bz2
    import json
    import lzma

    raw = text.encode("utf-8")
    mb = len(raw) / 1e6
    lines = text.split("\n")[:-1]
    jsonl = "".join(json.dumps({"text": t}) + "\n" for t in lines).encode()
    files = {
        "txt": raw,
        "txt.gz": gzip.compress(raw, 6),
        "txt.bz2": bz2.compress(raw),
        "txt.xz": lzma.compress(raw),
        "jsonl": jsonl,
        "jsonl.gz": gzip.compress(jsonl, 6),
        "xml.bz2": bz2.compress(_dump(text)),
    }
    try:
        import zstandard

        files["txt.zst"] = zstandard.compress(raw)
        files["jsonl.zst"] = zstandard.compress(jsonl)
    except ImportError:
        pass
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": lines}), tmpdir / "c.parquet")
        files["parquet"] = (tmpdir / "c.parquet").read_bytes()
    except ImportError:
        pass
    print(
        f"\nformats: {mb:.1f} MB of text, local engine, 1 core, no hashing, best of {repeat}; "
        "MB of the plain text per CPU second"
    )
    for name, data in files.items():
        path = tmpdir / f"c.{name}"
        path.write_bytes(data)
        row = []
        for rule in ("wang2021", "default"):
            _, cpu, _ = best_of(
                repeat,
                lambda: count_cooccurrences(path, tasks, rule=rule, n_jobs=1, hash_inputs=False),
            )
            row.append(f"{rule} {mb / cpu:7.1f}")
        print(f"  {name:10s} {len(data) / 1e6:7.1f} MB stored   " + "   ".join(row))
        path.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=24.0, help="approximate corpus size in MB")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="cores for 'all cores'")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask engine")
    ap.add_argument("--matchers", action="store_true", help="also time the scanner candidates")
    ap.add_argument("--formats", action="store_true", help="also time each corpus format")
    ap.add_argument("--data", default=None, help="folder of *.tokens[.gz] files")
    args = ap.parse_args()
    warnings.simplefilter("ignore")

    base, names = read_sources(args.data)
    reps = max(1, round(args.mb * 1e6 / len(base.encode("utf-8"))))
    tmpdir = Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    path = tmpdir / "corpus.txt"
    path.write_text(base * reps, encoding="utf-8")
    mb = path.stat().st_size / 1e6
    tasks = load_tasks("winobias32").words
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"corpus: {mb:.1f} MB ({' + '.join(names)} x {reps}); machine: {os.cpu_count()} "
        f"cores (load average {load:.1f} at start); 'all cores' = {args.jobs} jobs; tasks: "
        f"winobias32; python {sys.version.split()[0]}; best of {args.repeat}"
    )

    t_base, c_base, ref = best_of(
        args.repeat, lambda: baseline(path, tasks, list(WANG2021_WORD_GROUPS.values()))
    )
    print(
        f"\nbaseline §4 line by line (1 core): {t_base:7.2f} s, {c_base:7.2f} CPU s: "
        f"{mb / t_base:7.1f} MB/s, {mb / c_base:7.1f} MB per CPU s"
    )
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    refs = {}
    for rule in ("wang2021", "default"):
        cls = RULES.get(rule)
        counter = cls(tasks, dict(cls.default_groups))
        dt, cpu, res = best_of(args.repeat, lambda: counter.count(lines, fast=False))
        refs[rule] = res
        print(
            f"plain {rule:8s} line by line (1 core): {dt:7.2f} s, {cpu:7.2f} CPU s: "
            f"{mb / dt:7.1f} MB/s, {mb / cpu:7.1f} MB per CPU s (vs baseline "
            f"{c_base / cpu:4.2f}x)"
        )
    assert np.array_equal(refs["wang2021"][0], ref), "plain wang2021 != baseline"

    runs = [("local", 1, {}), ("local", args.jobs, {})]
    cluster_addr = {}
    if not args.no_dask:
        try:
            import distributed
        except ImportError:
            print("(dask[distributed] not installed: no Dask rows)")
        else:
            for n in (1, 2):
                t0 = time.perf_counter()
                cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
                )
                cluster_addr[n] = cluster
                print(
                    f"(Dask LocalCluster of {n} worker(s) started in "
                    f"{time.perf_counter() - t0:.1f} s, not timed below)"
                )
                runs.append(
                    ("dask", n, {"scheduler": cluster.scheduler_address, "chunk_chars": 4 << 20})
                )
    # the baseline again on a quarter of the corpus right before each run: the ratio of a
    # row is the median over its repeats of (baseline CPU s/MB) / (engine CPU s/MB), so a
    # machine whose load changes during the benchmark does not bias it
    part = tmpdir / "quarter.txt"
    part.write_text(base * max(1, reps // 4), encoding="utf-8")
    mb_part = part.stat().st_size / 1e6
    print(
        "\nMB/s = wall clock; MB/CPU s = per core (this process + its pool workers; Dask "
        "workers' CPU is not seen: their column is MB/s / workers); vs baseline = per core, "
        "median of the repeats, each against the baseline timed just before it"
    )
    print(
        f"{'rule':9s} {'engine':6s} {'cores':>5s} {'hash':>5s} {'seconds':>8s} "
        f"{'CPU s':>7s} {'MB/s':>8s} {'MB/CPU s':>9s} {'vs baseline':>11s}  counts"
    )
    for rule in ("wang2021", "default"):
        for engine, cores, extra in runs:
            for hashing in (True, False) if engine == "local" and cores == 1 else (True,):
                kw = dict(extra, rule=rule, engine=engine, hash_inputs=hashing)
                if engine == "local":
                    kw["n_jobs"] = cores
                walls, cpus, ratios = [], [], []
                for _ in range(args.repeat):
                    _, c_ref, _ = best_of(
                        1, lambda: baseline(part, tasks, list(WANG2021_WORD_GROUPS.values()))
                    )
                    dt, cpu, res = best_of(1, lambda: count_cooccurrences(path, tasks, **kw))
                    used = cpu if engine == "local" else dt * cores
                    walls.append(dt)
                    cpus.append(cpu)
                    ratios.append((c_ref / mb_part) / (used / mb))
                dt, cpu = min(walls), min(cpus)
                same = (
                    np.array_equal(res.counts.to_numpy(), refs[rule][0])
                    and (res.n_lines, res.n_sentences, res.n_kept) == refs[rule][1:]
                )
                per_core = mb / cpu if engine == "local" else mb / dt / cores
                print(
                    f"{rule:9s} {engine:6s} {cores:5d} {'yes' if hashing else 'no':>5s} "
                    f"{dt:8.2f} {cpu if engine == 'local' else float('nan'):7.2f} "
                    f"{mb / dt:8.1f} {per_core:9.1f} {float(np.median(ratios)):10.1f}x  "
                    f"{'== reference' if same else 'DIFFER!'}"
                )
    part.unlink()
    for cluster in cluster_addr.values():
        cluster.close()
    if args.matchers:
        matchers(path.read_bytes(), tasks, args.repeat)
    if args.formats:
        formats(base * max(1, reps // 4), tasks, args.repeat, tmpdir)
    path.unlink()
    tmpdir.rmdir()


if __name__ == "__main__":
    main()
