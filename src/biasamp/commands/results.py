"""The subcommands of saved results: ``report`` and ``compare`` (no model loaded)."""

from __future__ import annotations

from . import add_out, report_file, say_report, work_done


def report(p) -> None:
    """``biasamp report``: rebuild reports from a saved result directory."""
    p.description = (
        "Render report.md / report.html / report.json / model_card.md and the PNG "
        "plots from a directory written by `biasamp probe`. Reads results.json "
        "only; never loads a model."
    )
    p.add_argument(
        "result_dir", metavar="RESULT_DIR", help="a directory written by `biasamp probe`"
    )
    p.add_argument(
        "--format",
        dest="formats",
        default="md,html,json",
        metavar="LIST",
        help="comma-separated: md, html, json, model-card (default md,html,json)",
    )
    p.add_argument(
        "--no-plots", dest="plots", action="store_false", help="do not redraw the PNG plots"
    )
    add_out(
        p,
        "write the reports into this new folder instead of RESULT_DIR",
        "the report folder --out holds (one biasamp wrote) as a whole",
        metavar="DIR2",
    )
    p.set_defaults(func=run_report)


def run_report(args) -> int:
    from ..report import build_report

    written = build_report(
        args.result_dir,
        formats=args.formats,
        plots=args.plots,
        out=args.out,
        overwrite=args.overwrite,
        progress=args.display,
    )
    work_done(args)
    if not args.quiet:
        for path in written.values():
            print(path)
    folder = next(iter(written.values())).parent if written else args.result_dir
    say_report(report_file(folder, args.formats), args)
    return 0


def compare(p) -> None:
    """``biasamp compare``: several result directories side by side."""
    p.description = (
        "One row per (base-rate source, direction), one column per result "
        "directory (mean ± std [bootstrap CI] over templates). Prints a Markdown "
        "table; with --out also writes comparison.md / comparison.csv (and .html)."
    )
    p.add_argument(
        "result_dirs",
        nargs="+",
        metavar="RESULT_DIR",
        help="directories written by `biasamp probe`",
    )
    p.add_argument(
        "--format",
        dest="formats",
        default="md,csv",
        metavar="LIST",
        help="comma-separated: md, csv, html (default md,csv)",
    )
    p.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="compare results whose setups differ (templates, attributes, tasks, "
        "estimator, compat, base rates, CI level and bootstrap); the "
        "differences are marked",
    )
    add_out(
        p,
        "write the comparison files here",
        "the comparison --out holds (one biasamp wrote) as a whole",
        metavar="DIR",
    )
    p.set_defaults(func=run_compare)


def run_compare(args) -> int:
    from ..pipeline import paired_differences
    from ..report import compare_dirs, markdown_table, paired_markdown, setup_differences
    from ..results import ProbeResult

    paired = None
    results = [ProbeResult.load(d) for d in args.result_dirs]
    if len(results) > 1 and not setup_differences(results):
        paired = paired_differences(results)
    wide = compare_dirs(
        args.result_dirs,
        out=args.out,
        formats=args.formats,
        allow_mismatch=args.allow_mismatch,
        overwrite=args.overwrite,
        paired=paired,
        results=results,
    )
    if not args.quiet:
        print(markdown_table(wide))
        if paired is not None and not paired.empty:
            print()
            print(paired_markdown(paired))
    if args.out:
        say_report(report_file(args.out, args.formats, comparison=True), args)
    return 0
