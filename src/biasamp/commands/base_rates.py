"""``biasamp base-rates``: list the base-rate sources or show one source's table."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

HELP = "list base-rate sources or show a source's joint table"


def register(subparsers) -> None:
    p = subparsers.add_parser("base-rates", help=HELP, description=HELP + ".")
    p.add_argument("--list", action="store_true", help="list the registered sources")
    p.add_argument("action", nargs="?", choices=("show",), help="show a source's table")
    p.add_argument("source", nargs="?", help="source name, uniform:SOURCE or file:PATH.csv")
    p.add_argument("--tasks", default="winobias32",
                   help="a,b,c | @file.txt | a file | winobias32 | winobias40 | winogender60")
    p.add_argument("--attributes", default="he,she", help="comma list (default he,she)")
    p.add_argument("--direction", help="attribute_to_task | task_to_attribute (A->T / T->A); "
                   "required by the *-wang2021 sources")
    p.add_argument("--provenance", action="store_true", help="also print the provenance JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._errors import BiasampError
    from .._validation import Names, check
    from ..base_rates import SOURCES, ZeroRowWarning, get_source, list_sources
    from ..tasks import load_tasks

    if args.list or args.action is None:
        for name in list_sources():
            print(f"{name:22s} {SOURCES.description(name)}")
        print(f"{'uniform:SOURCE':22s} equal joint, association = signs of SOURCE")
        print(f"{'file:PATH.csv':22s} your own table (see base_rates/README.md)")
        return 0
    if not args.source:
        raise BiasampError("base-rates show needs a SOURCE name; got none")
    source = get_source(args.source)
    tasks = load_tasks(args.tasks).words
    attributes = check(args.attributes, Names(), "attributes")
    with warnings.catch_warnings():  # zero rows are printed below
        warnings.simplefilter("ignore", ZeroRowWarning)
        table = source.table(tasks, attributes, direction=args.direction)
    out = table.joint.copy()
    if table.association is not None:
        for c in table.association.columns:
            out[f"sign({c})"] = table.association[c]
    print(f"# {table.provenance.get('name')}: direction={table.direction} "
          f"tie_tol={table.tie_tol}")
    print(out.to_string(float_format=lambda v: f"{v:.10g}"))
    if table.zero_rows:
        print(f"# all-zero rows (P(A|T) undefined): {', '.join(table.zero_rows)}")
    if args.provenance:
        json.dump(table.provenance, sys.stdout, indent=2, default=str)
        print()
    return 0
