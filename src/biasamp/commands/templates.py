"""``biasamp templates``: list template sets / task vocabularies, show generated sentences,
convert a benchmark's files into a template set."""

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
    s.add_argument("--tasks", default=None, metavar="VOCAB",
                   help=f"task vocabulary [{', '.join(list_task_sets())}], a "
                        "CSV/TSV/TXT/TOML path, @FILE or comma-separated words (default: "
                        "the set's own tasks for a set of bound templates, else winobias32)")
    s.add_argument("--direction", default="both", metavar="DIR",
                   help="which prompts to show: both (default), attribute_to_task, "
                        "task_to_attribute (aliases AT, TA, 'A->T', 'T->A', any case: quote "
                        "the arrows in a shell)")
    s.add_argument("--limit", type=int, default=None, metavar="N",
                   help="print at most N lines per section (default: all)")
    s.add_argument("--family", default=None, help="only templates of this family")
    s.add_argument("--tense", default=None, help="only templates of this tense")
    s.add_argument("--group", default=None, help="only templates of this group (e.g. pro)")
    s.set_defaults(func=run_show)
    c = sub.add_parser("convert", help="convert a benchmark's published files into a template "
                                       "set file",
                       description="Convert the published files of a benchmark into a template "
                                   "set (the shipped winogender and winobias sets are this "
                                   "command's output) and print what was converted. winogender: "
                                   "PATH is templates.tsv or its folder; winobias: the folder of "
                                   "the eight {pro,anti}_stereotyped_type{1,2}.txt.{dev,test} "
                                   "files.")
    c.add_argument("benchmark", metavar="BENCHMARK",
                   help=f"which converter [{', '.join(T.CONVERTERS)}]")
    c.add_argument("path", metavar="PATH", help="the benchmark's file or folder")
    c.add_argument("--out", "-o", required=True, metavar="FILE",
                   help="template set file to write (TOML; a new file)")
    c.add_argument("--overwrite", action="store_true",
                   help="replace the template set --out names (one a converter wrote)")
    c.add_argument("--name", default=None, help="the set's name (default: the benchmark's)")
    c.set_defaults(func=run_convert)
    p.set_defaults(func=run_list)


def run_list(args) -> int:
    sets = [(n, T.load_template_set(n)) for n in T.list_template_sets()]
    print("Template sets:")
    width = max(len(n) for n, _ in sets)
    for name, ts in sets:
        print(f"  {name:<{width}}  {len(ts):>5} templates  {ts.description}")
    bound = [n for n, ts in sets if ts.bound]
    if bound:
        print(f"  ({', '.join(bound)}: templates bound to their own task, not crossed with the "
              "vocabulary)")
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
    if args.family is not None or args.tense is not None or args.group is not None:
        tset = tset.select(family=args.family, tense=args.tense, group=args.group)
    attributes = T.resolve_attributes(args.attributes)
    if args.tasks is None:
        own = [t for t in tset.tasks if any(t in x.tasks for x in tset.templates)]
        vocab = load_tasks(own if tset.bound and own else "winobias32")
    else:
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


def run_convert(args) -> int:
    from .._registry import unknown_name

    if args.benchmark not in T.CONVERTERS:
        raise unknown_name("benchmark", args.benchmark, list(T.CONVERTERS))
    kwargs = {"name": args.name} if args.name else {}
    out = T.conversion_output(args.out, overwrite=args.overwrite, param="--out")
    out.check()
    conversion = T.CONVERTERS[args.benchmark](args.path, **kwargs)
    path = conversion.write(out)
    T.load_template_set(path)  # what was written loads (every template checked)
    print(f"# {conversion.name}: wrote {path}")
    for line in conversion.summary_lines():
        print(line)
    return 0
