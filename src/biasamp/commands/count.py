"""``biasamp count``: co-occurrence counts over files, URLs or a ``datasets`` corpus."""

from __future__ import annotations

import argparse
import sys
import warnings

from .._errors import BiasampError, ZeroRowWarning

HELP = "count (occupation, gender-word) co-occurrences per sentence in a corpus"


def parse_groups(value: str) -> dict[str, list[str]]:
    """``he=he,him,his;she=she,her`` -> {"he": [...], "she": [...]}."""
    groups: dict[str, list[str]] = {}
    for part in value.split(";"):
        if not part.strip():
            continue
        if "=" not in part:
            raise BiasampError(f"--groups must look like 'he=he,him;she=she,her'; got {value!r}")
        name, words = part.split("=", 1)
        ws = [w.strip() for w in words.split(",") if w.strip()]
        if not name.strip() or not ws:
            raise BiasampError(f"--groups must look like 'he=he,him;she=she,her'; got {value!r}")
        groups[name.strip()] = ws
    if not groups:
        raise BiasampError(f"--groups is empty; got {value!r}")
    return groups


def register(subparsers) -> None:
    from ..corpus import ENGINES, FORMATS, MATCHERS, RULES
    from ..tasks import list_task_sets

    p = subparsers.add_parser("count", help=HELP, description=HELP + ". Writes a base-rate CSV "
                              "readable as 'file:OUT.csv'.")
    p.add_argument("files", nargs="*", help="files, globs or fsspec URLs (s3://, gs://, hf://, "
                   "https://): text (one paragraph per line), .jsonl, .parquet, Wikipedia "
                   "pages-articles .xml; each optionally .gz/.bz2/.xz/.zst")
    p.add_argument("--dataset", help="a Hugging Face datasets name instead of files "
                   "(e.g. wikitext), streamed")
    p.add_argument("--config", help="dataset config (e.g. wikitext-103-raw-v1)")
    p.add_argument("--split", default="train", help="dataset split (default train)")
    p.add_argument("--text-column", default="text",
                   help="the text of JSON Lines / Parquet / dataset records (default text)")
    p.add_argument("--format", choices=FORMATS.names(), default=None,
                   help="read every file as this format (default: from each file name)")
    p.add_argument("--tasks", required=True,
                   help="occupations: a,b,c | @file.txt | FILE.csv/.txt/.toml | "
                   + " | ".join(list_task_sets()))
    p.add_argument("--rule", choices=RULES.names(), default="default",
                   help="; ".join(f"{name}: {RULES.description(name)}" for name in RULES.names()))
    p.add_argument("--groups", help="word groups, e.g. 'he=he,him,his;she=she,her' "
                   "(default: the rule's groups)")
    p.add_argument("--no-plurals", action="store_true", help="default rule: singular only")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default all "
                   "cores; 1 = this process); with --engine dask and no --scheduler, the "
                   "local cluster's workers")
    p.add_argument("--engine", choices=ENGINES.names(), default="local",
                   help="; ".join(f"{n}: {ENGINES.description(n)}" for n in ENGINES.names()))
    p.add_argument("--scheduler", help="--engine dask: the scheduler address, e.g. "
                   "tcp://HOST:8786 (default: a local cluster)")
    p.add_argument("--retries", type=int, default=1,
                   help="--engine dask: runs again of a failed shard (default 1)")
    p.add_argument("--shard-mb", type=float, default=None,
                   help="shard size in MB (default 4 locally, 64 with dask)")
    p.add_argument("--matcher", choices=MATCHERS.names(), default=None,
                   help="the occupation scanner (speed only; default hyperscan if it imports)")
    p.add_argument("--no-hash", action="store_true",
                   help="do not record the sha256 of local files (saves reading them twice)")
    p.add_argument("--name", help="corpus name for the provenance")
    p.add_argument("-o", "--out", required=True, help="output CSV (a new file)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the counts CSV --out names (one biasamp wrote)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..corpus import count_cooccurrences, counts_output, write_counts_csv
    from ..tasks import load_tasks
    from . import work_done

    if bool(args.files) == bool(args.dataset):
        raise BiasampError("give either FILES or --dataset (exactly one); got "
                           f"files={args.files!r}, dataset={args.dataset!r}")
    corpus = f"hf:{args.dataset}" if args.dataset else args.files
    word_groups = parse_groups(args.groups) if args.groups else None
    tasks = load_tasks(args.tasks).words
    out = counts_output(args.out, overwrite=args.overwrite, param="--out")
    out.check()  # before counting, which may take hours
    shard = None
    if args.shard_mb is not None:
        if not args.shard_mb > 0:
            raise BiasampError(f"--shard-mb must be a positive number; got {args.shard_mb}")
        shard = max(1, int(args.shard_mb * 1e6))
    with warnings.catch_warnings():  # the zero-row tasks are printed in the summary below
        warnings.simplefilter("ignore", ZeroRowWarning)
        result = count_cooccurrences(
            corpus, tasks, rule=args.rule, word_groups=word_groups,
            plurals=not args.no_plurals, dataset_config=args.config, split=args.split,
            text_column=args.text_column, fmt=args.format, n_jobs=args.jobs,
            chunk_chars=shard, engine=args.engine, scheduler=args.scheduler,
            retries=args.retries, matcher=args.matcher, hash_inputs=not args.no_hash,
            progress=getattr(args, "display", None) or False, corpus_name=args.name)
    work_done(args)
    out = write_counts_csv(result, out)
    if args.quiet:  # -q: only errors, as for every command
        return 0
    print(f"{out}: {result.n_kept} sentences counted of {result.n_sentences} scanned "
          f"({result.n_lines} lines) in {result.provenance['seconds']:.1f} s; "
          f"{len(result.zero_rows)} task(s) with no count"
          + (f": {', '.join(result.zero_rows)}" if result.zero_rows else ""), file=sys.stdout)
    return 0
