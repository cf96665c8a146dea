"""``biasamp count``: co-occurrence counts over text files or a ``datasets`` corpus."""

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
    from ..corpus import RULES
    from ..tasks import list_task_sets

    p = subparsers.add_parser("count", help=HELP, description=HELP + ". Writes a base-rate CSV "
                              "readable as 'file:OUT.csv'.")
    p.add_argument("files", nargs="*", help="UTF-8 text files (one paragraph per line)")
    p.add_argument("--dataset", help="a Hugging Face datasets name instead of files "
                   "(e.g. wikitext), streamed")
    p.add_argument("--config", help="dataset config (e.g. wikitext-103-raw-v1)")
    p.add_argument("--split", default="train", help="dataset split (default train)")
    p.add_argument("--text-column", default="text")
    p.add_argument("--tasks", required=True,
                   help="occupations: a,b,c | @file.txt | FILE.csv/.txt/.toml | "
                   + " | ".join(list_task_sets()))
    p.add_argument("--rule", choices=RULES.names(), default="default",
                   help="; ".join(f"{name}: {RULES.description(name)}" for name in RULES.names()))
    p.add_argument("--groups", help="word groups, e.g. 'he=he,him,his;she=she,her' "
                   "(default: the rule's groups)")
    p.add_argument("--no-plurals", action="store_true", help="default rule: singular only")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default all cores)")
    p.add_argument("--name", help="corpus name for the provenance")
    p.add_argument("-o", "--out", required=True, help="output CSV")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..corpus import count_cooccurrences
    from ..tasks import load_tasks

    if bool(args.files) == bool(args.dataset):
        raise BiasampError("give either FILES or --dataset (exactly one); got "
                           f"files={args.files!r}, dataset={args.dataset!r}")
    corpus = f"hf:{args.dataset}" if args.dataset else args.files
    word_groups = parse_groups(args.groups) if args.groups else None
    tasks = load_tasks(args.tasks).words
    with warnings.catch_warnings():  # the zero-row tasks are printed in the summary below
        warnings.simplefilter("ignore", ZeroRowWarning)
        result = count_cooccurrences(
            corpus, tasks, rule=args.rule, word_groups=word_groups,
            plurals=not args.no_plurals, dataset_config=args.config, split=args.split,
            text_column=args.text_column, n_jobs=args.jobs, progress=not args.quiet,
            corpus_name=args.name)
    out = result.to_csv(args.out)
    print(f"{out}: {result.n_kept} sentences counted of {result.n_sentences} scanned "
          f"({result.n_lines} lines); {len(result.zero_rows)} task(s) with no count"
          + (f": {', '.join(result.zero_rows)}" if result.zero_rows else ""), file=sys.stdout)
    return 0
