"""The subcommands of the inputs: ``templates``, ``base-rates`` and ``count``.

long on purpose: three commands, each with its options and its output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

from .._errors import BiasampError, BiasampWarning, ZeroRowWarning
from . import add_config_options, add_out, print_table, work_done


def templates(p) -> None:
    """``biasamp templates``: list template sets / task vocabularies, show generated
    sentences, convert a benchmark's files into a template set."""
    from .. import templates as T

    p.description = (
        "Without arguments (or with --list): the template sets and task vocabularies with their "
        "sizes. `biasamp templates show SET` prints the full sentences of a set, then the "
        "masked prompts and candidates per direction. SET and --tasks also accept file paths "
        "(see templates/README.md)."
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--list", action="store_true", help="list template sets and task vocabularies")
    sub = p.add_subparsers(dest="templates_command", metavar="ACTION")
    s = sub.add_parser(
        "show",
        help="print the sentences, prompts and candidates of a set",
        description="Print the full sentences of a template set for the given attributes and "
        "tasks, then the masked prompts with their candidates for each direction.",
    )
    s.add_argument(
        "set",
        metavar="SET",
        help=f"template set name [{', '.join(T.list_template_sets())}] or TOML path",
    )
    # as a probe takes them (ProbeConfig's fields): the same help, default and flags
    add_config_options(s, groups=("templates and tasks",), only=("attributes", "tasks"))
    s.add_argument(
        "--direction",
        default="both",
        metavar="DIR",
        help="which prompts to show: both (default), attribute_to_task, task_to_attribute "
        "(aliases AT, TA, 'A->T', 'T->A', any case: quote the arrows in a shell)",
    )
    s.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="print at most N lines per section (default: all)",
    )
    s.add_argument("--family", help="only templates of this family")
    s.add_argument("--tense", help="only templates of this tense")
    s.add_argument("--group", help="only templates of this group (e.g. pro)")
    s.set_defaults(func=run_templates_show)
    c = sub.add_parser(
        "convert",
        help="convert a benchmark's published files into a template set file",
        description="Convert the published files of a benchmark into a template set (the "
        "shipped winogender and winobias sets are this command's output) and print what was "
        "converted. winogender: PATH is templates.tsv or its folder; winobias: the folder of "
        "the eight {pro,anti}_stereotyped_type{1,2}.txt.{dev,test} files.",
    )
    c.add_argument(
        "benchmark", metavar="BENCHMARK", help=f"which converter [{', '.join(T.CONVERTERS)}]"
    )
    c.add_argument("path", metavar="PATH", help="the benchmark's file or folder")
    add_out(
        c,
        "template set file to write (TOML; a new file)",
        "the template set --out names (one a converter wrote)",
        required=True,
        metavar="FILE",
    )
    c.add_argument("--name", help="the set's name (default: the benchmark's)")
    c.set_defaults(func=run_templates_convert)
    p.set_defaults(func=run_templates_list)


def run_templates_list(args) -> int:
    from .. import templates as T
    from ..tasks import list_task_sets, load_tasks

    sets = [(n, T.load_template_set(n)) for n in T.list_template_sets()]
    print("Template sets:")
    print_table(
        [(name, f"{len(ts)} templates", ts.description) for name, ts in sets],
        left={0, 2},
        widths={1: 15},
    )
    bound = [n for n, ts in sets if ts.bound]
    if bound:
        print(
            f"  ({', '.join(bound)}: templates bound to their own task, not crossed with the "
            "vocabulary)"
        )
    vocabs = [(name, load_tasks(name)) for name in list_task_sets()]
    print("Task vocabularies:")
    print_table(
        [
            (
                name,
                f"{len(v):>5} words" + (f", {len(v.groups)} grouped" if v.groups else ""),
                v.description,
            )
            for name, v in vocabs
        ],
        left={0, 1, 2},
    )
    print(f"Attributes: {', '.join(T.ATTRIBUTES)}")
    for name in T.list_attribute_sets():  # groups (templates/attributes/)
        print(f"Groups ({name}): {', '.join(T.load_attribute_set(name).groups)}")
    return 0


def _limited(lines, limit):
    for line in lines[:limit]:
        print(line)
    if limit is not None and len(lines) > limit:
        print(f"  ... ({len(lines) - limit} more)")


def run_templates_show(args) -> int:
    from .. import templates as T
    from .._conventions import DIRECTIONS, canonical_direction
    from .._validation import Integer, Optional, check
    from ..tasks import load_tasks

    limit = check(args.limit, Optional(Integer(0)), "--limit")
    both = args.direction.strip().lower() == "both"
    directions = list(DIRECTIONS) if both else [canonical_direction(args.direction, "--direction")]
    tset = T.load_template_set(args.set).select(
        family=args.family, tense=args.tense, group=args.group
    )
    attributes = T.resolve_attributes(args.attributes)
    if args.tasks is None:
        own = [t for t in tset.tasks if any(t in x.tasks for x in tset.templates)]
        vocab = load_tasks(own if tset.bound and own else "winobias32")
    else:
        vocab = load_tasks(args.tasks)
    print(
        f"# {tset.name}: {len(tset)} templates x {len(attributes)} attributes x "
        f"{len(vocab)} tasks (agreement={'yes' if tset.agreement else 'no'}, "
        f"a/an rule={tset.article}, sha256 {tset.sha256[:12]})"
    )
    sentences = T.render_sentences(tset, args.attributes, vocab)
    print(f"## sentences ({len(sentences)})")
    _limited([f"{r.template_id}\t{r.sentence}" for r in sentences.itertuples()], limit)
    for direction in directions:
        df = T.build_prompts(tset, args.attributes, vocab, direction=direction)
        print(f"## {direction} prompts ({len(df)})")
        _limited(
            [f"{r.template_id}\t{r.prompt}\t{' | '.join(r.candidates)}" for r in df.itertuples()],
            limit,
        )
    return 0


def run_templates_convert(args) -> int:
    from .. import templates as T
    from .._registry import unknown_name

    if args.benchmark not in T.CONVERTERS:
        raise unknown_name("benchmark", args.benchmark, list(T.CONVERTERS))
    out = T.conversion_output(args.out, overwrite=args.overwrite, param="--out")
    out.check()
    kwargs = {"name": args.name} if args.name else {}  # else the converter's own default
    conversion = T.CONVERTERS[args.benchmark](args.path, **kwargs)
    path = conversion.write(out)
    T.load_template_set(path)  # what was written loads (every template checked)
    print(f"# {conversion.name}: wrote {path}")
    for line in conversion.summary_lines():
        print(line)
    return 0


def base_rates(p) -> None:
    """``biasamp base-rates``: list the base-rate sources or show one source's table."""
    p.add_argument("--list", action="store_true", help="list the registered sources")
    p.add_argument("action", nargs="?", choices=("show",), help="show a source's table")
    p.add_argument("source", nargs="?", help="source name, uniform:SOURCE or file:PATH.csv")
    p.add_argument(
        "--tasks",
        default="winobias32",
        help="a,b,c | @file.txt | a file | winobias32 | winobias40 | winogender60",
    )
    p.add_argument("--attributes", default="he,she", help="comma list (default he,she)")
    p.add_argument(
        "--direction",
        help="attribute_to_task | task_to_attribute (A->T / T->A); "
        "required by the *-wang2021 sources",
    )
    p.add_argument("--provenance", action="store_true", help="also print the provenance JSON")
    p.set_defaults(func=run_base_rates)


def run_base_rates(args: argparse.Namespace) -> int:
    from .._validation import Names, check
    from ..base_rates import SOURCES, get_source, list_sources
    from ..tasks import load_tasks

    if args.list or args.action is None:
        rows = [(name, SOURCES.description(name)) for name in list_sources()]
        rows += [
            ("uniform:SOURCE", "equal joint, association = signs of SOURCE"),
            ("file:PATH.csv", "your own table (see base_rates/README.md)"),
        ]
        print_table(rows, left={0, 1}, widths={0: 21}, indent="")
        return 0
    if not args.source:
        raise BiasampError("base-rates show needs a SOURCE name; got none")
    source = get_source(args.source)
    tasks = load_tasks(args.tasks).words
    attributes = check(args.attributes, Names(), "attributes")
    with warnings.catch_warnings():  # zero rows are printed below
        warnings.simplefilter("ignore", ZeroRowWarning)
        table = source.table(tasks, attributes, direction=args.direction)
    out = table.joint
    if table.association is not None:
        out = out.join(table.association.rename(columns="sign({})".format))
    print(f"# {table.provenance.get('name')}: direction={table.direction} tie_tol={table.tie_tol}")
    print(out.to_string(float_format=lambda v: f"{v:.10g}"))
    if table.zero_rows:
        print(f"# all-zero rows (P(A|T) undefined): {', '.join(table.zero_rows)}")
    if args.provenance:
        json.dump(table.provenance, sys.stdout, indent=2, default=str)
        print()
    from ..pipeline.evaluate import check_base

    try:  # what the probe refuses (all 50/50: every BiasAmp-> 0 by construction), said here
        check_base(table, args.source, tasks=tasks, attributes=attributes, min_base_count=None)
    except BiasampError as exc:
        warnings.warn(f"biasamp probe refuses this table: {exc}", BiasampWarning, stacklevel=1)
    return 0


def parse_groups(value: str) -> dict[str, list[str]]:
    """``he=he,him,his;she=she,her`` -> {"he": [...], "she": [...]}; an attribute set's name
    or file -> its groups' terms."""
    if "=" not in value and value.strip():
        from .._errors import UnknownNameError
        from ..templates import list_attribute_sets, word_groups

        try:
            return word_groups(value.strip())
        except UnknownNameError:
            sets = ", ".join(list_attribute_sets())
            raise BiasampError(
                f"--groups must look like 'he=he,him;she=she,her' or name an attribute set "
                f"({sets}) or its file; got {value!r}"
            ) from None
    groups: dict[str, list[str]] = {}
    for part in filter(str.strip, value.split(";")):
        name, _, words = part.partition("=")  # no "=": no words
        ws = [w.strip() for w in words.split(",") if w.strip()]
        if not name.strip() or not ws:
            raise BiasampError(f"--groups must look like 'he=he,him;she=she,her'; got {value!r}")
        groups[name.strip()] = ws
    if not groups:
        raise BiasampError(f"--groups is empty; got {value!r}")
    if len(groups) < 2:  # P(A|T) = 1 for every task: nothing to compare
        raise BiasampError(
            f"--groups must name at least 2 groups (the attributes a count compares); got {value!r}"
        )
    return groups


def count(p) -> None:
    """``biasamp count``: co-occurrence counts over files, URLs or a ``datasets`` corpus."""
    from ..corpus import ENGINES, FORMATS, MATCHERS, RULES
    from ..tasks import list_task_sets

    p.description = f"{p.description} Writes a base-rate CSV readable as 'file:OUT.csv'."
    p.add_argument(
        "files",
        nargs="*",
        help="files, globs or fsspec URLs (s3://, gs://, hf://, https://): text (one paragraph "
        "per line), .jsonl, .parquet, Wikipedia pages-articles .xml; each optionally "
        ".gz/.bz2/.xz/.zst",
    )
    p.add_argument(
        "--dataset", help="a Hugging Face datasets name instead of files (e.g. wikitext), streamed"
    )
    p.add_argument("--config", help="dataset config (e.g. wikitext-103-raw-v1)")
    p.add_argument("--split", default="train", help="dataset split (default train)")
    p.add_argument(
        "--text-column",
        default="text",
        help="the text of JSON Lines / Parquet / dataset records (default text)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS.names(),
        help="read every file as this format (default: from each file name)",
    )
    p.add_argument(
        "--tasks",
        required=True,
        help="occupations: a,b,c | @file.txt | FILE.csv/.txt/.toml | "
        + " | ".join(list_task_sets()),
    )
    p.add_argument(
        "--rule",
        choices=RULES.names(),
        default="default",
        help="; ".join(f"{name}: {RULES.description(name)}" for name in RULES.names()),
    )
    p.add_argument(
        "--groups",
        help="word groups, e.g. 'he=he,him,his;she=she,her', or an attribute set's name or "
        "file (race, ethnicity, gender-race: its groups' terms); default: the rule's groups",
    )
    p.add_argument("--no-plurals", action="store_true", help="default rule: singular only")
    p.add_argument(
        "--jobs",
        type=int,
        help="worker processes (default all cores; 1 = this process); with --engine dask and no "
        "--scheduler, the local cluster's workers",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES.names(),
        default="local",
        help="; ".join(f"{n}: {ENGINES.description(n)}" for n in ENGINES.names()),
    )
    p.add_argument(
        "--scheduler",
        help="--engine dask: the scheduler address, e.g. tcp://HOST:8786 "
        "(default: a local cluster)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=1,
        help="--engine dask: runs again of a failed shard (default 1)",
    )
    p.add_argument(
        "--shard-mb",
        type=float,
        help="shard size in MB (default 4 locally, 64 with dask)",
    )
    p.add_argument(
        "--matcher",
        choices=MATCHERS.names(),
        help="the occupation scanner (speed only; default hyperscan if it imports)",
    )
    p.add_argument(
        "--no-hash",
        action="store_true",
        help="do not record the sha256 of local files (saves reading them twice)",
    )
    p.add_argument("--name", help="corpus name for the provenance")
    add_out(
        p,
        "output CSV (a new file)",
        "the counts CSV --out names (one biasamp wrote)",
        required=True,
    )
    p.set_defaults(func=run_count)


def run_count(args: argparse.Namespace) -> int:
    from ..corpus import count_cooccurrences, counts_output, resolve_inputs, write_counts_csv
    from ..tasks import load_tasks

    if bool(args.files) == bool(args.dataset):
        raise BiasampError(
            "give either FILES or --dataset (exactly one); got "
            f"files={args.files!r}, dataset={args.dataset!r}"
        )
    corpus = f"hf:{args.dataset}" if args.dataset else args.files
    word_groups = parse_groups(args.groups) if args.groups else None
    tasks = load_tasks(args.tasks).words
    out = counts_output(args.out, overwrite=args.overwrite, param="--out")
    out.check()  # before counting, which may take hours
    if args.files:  # the counts file being written is not a corpus file (a glob's catch)
        target = os.path.realpath(out.target)
        for inp in resolve_inputs(args.files, fmt=args.format):
            if inp.local and os.path.realpath(inp.url) == target:
                raise BiasampError(
                    f"--out {args.out!r} is also a corpus file ({inp.url!r}, from FILES "
                    f"{' '.join(args.files)}): the counts would count themselves; write them "
                    "elsewhere or narrow the glob"
                )
    shard = None
    if args.shard_mb is not None:
        if not args.shard_mb > 0:
            raise BiasampError(f"--shard-mb must be a positive number; got {args.shard_mb}")
        shard = max(1, int(args.shard_mb * 1e6))
    with warnings.catch_warnings():  # the zero-row tasks are printed in the summary below
        warnings.simplefilter("ignore", ZeroRowWarning)
        result = count_cooccurrences(
            corpus,
            tasks,
            rule=args.rule,
            word_groups=word_groups,
            plurals=not args.no_plurals,
            dataset_config=args.config,
            split=args.split,
            text_column=args.text_column,
            fmt=args.format,
            n_jobs=args.jobs,
            chunk_chars=shard,
            engine=args.engine,
            scheduler=args.scheduler,
            retries=args.retries,
            matcher=args.matcher,
            hash_inputs=not args.no_hash,
            progress=args.display,
            corpus_name=args.name,
        )
    work_done(args)
    out = write_counts_csv(result, out)
    if args.quiet:  # -q: only errors, as for every command
        return 0
    print(
        f"{out}: {result.n_kept} sentences counted of {result.n_sentences} scanned "
        f"({result.n_lines} lines) in {result.provenance['seconds']:.1f} s; "
        f"{len(result.zero_rows)} task(s) with no count"
        + (f": {', '.join(result.zero_rows)}" if result.zero_rows else ""),
        file=sys.stdout,
    )
    return 0
