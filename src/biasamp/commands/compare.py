"""``biasamp compare``: several result directories side by side."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help="compare several result directories side by side",
        description="One row per (base-rate source, direction), one column per result directory "
                    "(mean ± std [bootstrap CI] over templates). Prints a Markdown table; with "
                    "--out also writes comparison.md / comparison.csv (and .html).")
    p.add_argument("result_dirs", nargs="+", metavar="RESULT_DIR",
                   help="directories written by `biasamp probe`")
    p.add_argument("--out", "-o", metavar="DIR", help="write the comparison files here")
    p.add_argument("--format", dest="formats", default="md,csv", metavar="LIST",
                   help="comma-separated: md, csv, html (default md,csv)")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="compare results whose setups differ (templates, attributes, tasks, "
                        "estimator, compat, base rates, CI level and bootstrap); the "
                        "differences are marked")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the comparison --out holds (one biasamp wrote) as a whole")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..pipeline import paired_differences
    from ..report import compare_dirs, markdown_table, paired_markdown, setup_differences
    from ..results import ProbeResult
    from . import report_file, say_report

    paired = None
    results = [ProbeResult.load(d) for d in args.result_dirs] if args.result_dirs else None
    if results is not None and len(results) > 1 and not setup_differences(results):
        paired = paired_differences(results)
    wide = compare_dirs(args.result_dirs, out=args.out, formats=args.formats,
                        allow_mismatch=args.allow_mismatch, overwrite=args.overwrite,
                        paired=paired, results=results)
    if not args.quiet:
        print(markdown_table(wide))
        if paired is not None and not paired.empty:
            print()
            print(paired_markdown(paired))
    if args.out:
        say_report(report_file(args.out, args.formats, comparison=True), args)
    return 0
