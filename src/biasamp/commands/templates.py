"""``biasamp templates``: list template sets / task vocabularies, show generated sentences."""

from __future__ import annotations

import argparse

from .. import templates as T
from .._conventions import DIRECTIONS, canonical_direction
from .._validation import Integer, Optional, check
from ..tasks import list_task_sets, load_tasks


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "templates", help="list template sets and task vocabularies; show generated sentences",
        description="Without arguments (or with --list): the template sets and task "
                    "vocabularies with their sizes. `biasamp templates show SET` prints the "
                    "full sentences of a set, then the masked prompts and candidates per "
                    "direction. SET and --tasks also accept file paths (see templates/README.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="list template sets and task vocabularies")
    sub = p.add_subparsers(dest="templates_command", metavar="ACTION")
    s = sub.add_parser("show", help="print the sentences, prompts and candidates of a set",
                       description="Print the full sentences of a template set for the given "
                                   "attributes and tasks, then the masked prompts with their "
                                   "candidates for each direction.")
    s.add_argument("set", metavar="SET",
                   help=f"template set name [{', '.join(T.list_template_sets())}] or TOML path")
    s.add_argument("--attributes", default="he,she", metavar="LIST",
                   help="comma-separated attributes out of he,she,they (default he,she)")
    s.add_argument("--tasks", default="winobias32", metavar="VOCAB",
                   help=f"task vocabulary [{', '.join(list_task_sets())}], a "
                        "CSV/TSV/TXT/TOML path, @FILE or comma-separated words "
                        "(default winobias32)")
    s.add_argument("--direction", default="both", metavar="DIR",
                   help="which prompts to show: both (default), attribute_to_task, "
                        "task_to_attribute (aliases AT, TA, 'A->T', 'T->A', any case: quote "
                        "the arrows in a shell)")
    s.add_argument("--limit", type=int, default=None, metavar="N",
                   help="print at most N lines per section (default: all)")
    s.add_argument("--family", default=None, help="only templates of this family")
    s.add_argument("--tense", default=None, help="only templates of this tense")
    s.set_defaults(func=run_show)
    p.set_defaults(func=run_list)


def run_list(args) -> int:
    rows = [(name, len(ts), ts.description) for name, ts in
            ((n, T.load_template_set(n)) for n in T.list_template_sets())]
    print("Template sets:")
    width = max(len(r[0]) for r in rows)
    for name, n, desc in rows:
        print(f"  {name:<{width}}  {n:>5} templates  {desc}")
    vocabs = [(name, load_tasks(name)) for name in list_task_sets()]
    print("Task vocabularies:")
    width = max(len(n) for n, _ in vocabs)
    for name, v in vocabs:
        grouped = f", {len(v.groups)} grouped" if v.groups else ""
        print(f"  {name:<{width}}  {len(v):>5} words{grouped}  {v.description}")
    print(f"Attributes: {', '.join(T.ATTRIBUTES)}")
    return 0


def _limited(lines, limit):
    for i, line in enumerate(lines):
        if limit is not None and i >= limit:
            print(f"  ... ({len(lines) - limit} more)")
            return
        print(line)


def run_show(args) -> int:
    limit = check(args.limit, Optional(Integer(0)), "--limit")
    if args.direction.strip().lower() == "both":
        directions = list(DIRECTIONS)
    else:
        directions = [canonical_direction(args.direction, "--direction")]
    tset = T.load_template_set(args.set)
    if args.family is not None or args.tense is not None:
        tset = tset.select(family=args.family, tense=args.tense)
    attributes = T.resolve_attributes(args.attributes)
    vocab = load_tasks(args.tasks)
    print(f"# {tset.name}: {len(tset)} templates x {len(attributes)} attributes x "
          f"{len(vocab)} tasks (agreement={'yes' if tset.agreement else 'no'}, "
          f"a/an rule={tset.article}, sha256 {tset.sha256[:12]})")
    sentences = T.render_sentences(tset, attributes, vocab)
    print(f"## sentences ({len(sentences)})")
    _limited([f"{r.template_id}\t{r.sentence}" for r in sentences.itertuples()], limit)
    for direction in directions:
        df = T.build_prompts(tset, attributes, vocab, direction=direction)
        print(f"## {direction} prompts ({len(df)})")
        _limited([f"{r.template_id}\t{r.prompt}\t{' | '.join(r.candidates)}"
                  for r in df.itertuples()], limit)
    return 0
