"""``biasamp report``: rebuild reports from a saved result directory (no model needed)."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="rebuild reports from a result directory (results.json), no model needed",
        description="Render report.md / report.html / report.json / model_card.md and the PNG "
                    "plots from a directory written by `biasamp probe`. Reads results.json only; "
                    "never loads a model.")
    p.add_argument("result_dir", metavar="RESULT_DIR",
                   help="a directory written by `biasamp probe`")
    p.add_argument("--format", dest="formats", default="md,html,json", metavar="LIST",
                   help="comma-separated: md, html, json, model-card (default md,html,json)")
    p.add_argument("--no-plots", dest="plots", action="store_false",
                   help="do not redraw the PNG plots")
    p.add_argument("--out", "-o", metavar="DIR2", help="write the reports into this new folder "
                   "instead of RESULT_DIR")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the report folder --out holds (one biasamp wrote) as a whole")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..report import build_report
    from . import report_file, say_report, work_done

    written = build_report(args.result_dir, formats=args.formats, plots=args.plots,
                           out=args.out, overwrite=args.overwrite,
                           progress=getattr(args, "display", None) or False)
    work_done(args)
    if not args.quiet:
        for path in written.values():
            print(path)
    folder = next(iter(written.values())).parent if written else args.result_dir
    say_report(report_file(folder, args.formats), args)
    return 0
