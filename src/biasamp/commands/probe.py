"""``biasamp probe``: model -> Table-2-style BiasAmp-> results, plots and reports."""

from __future__ import annotations

from .._errors import BiasampError


def register(subparsers) -> None:
    from . import add_config_options

    p = subparsers.add_parser(
        "probe", help="measure BiasAmp-> of one or more masked or causal language models",
        description="Score fill-in-the-blank templates with a masked or causal (decoder-only) "
                    "language model and report "
                    "BiasAmp-> per base-rate source and direction (mean, population std and "
                    "bootstrap CI over templates), the per-(task, attribute) disaggregation, the "
                    "tokenisation audit and plots. Options given here override --config.")
    p.add_argument("--config", metavar="FILE", help="TOML or YAML file with probe options "
                   "(see examples/probe.toml); flags override it")
    # every other option is a ProbeConfig field (help, default, check and flag declared there)
    add_config_options(p, from_config=True)
    p.set_defaults(func=run)


def build_config(args):
    """ProbeConfig from --config (if any) with the given flags on top."""
    from ..pipeline import ProbeConfig

    cfg = ProbeConfig.from_cli(args)
    if not cfg.models:
        raise BiasampError("--model is required (or 'models' in --config); got none")
    if not cfg.out:
        raise BiasampError("--out is required (or 'out' in --config); got none")
    return cfg


def summary_lines(models, results) -> list[str]:
    """The summary ``biasamp probe`` prints: per model, one line per (base-rate source,
    direction) and per group, the columns as wide as their longest entry, every number
    through :func:`biasamp.report.format_value`; a CI it cannot give (``n/a``) explained once
    at the end."""
    from ..report import format_value

    rows = []  # (model, source, direction, text)
    for model, res in zip(models, results):
        for rec in res.summary.to_dict(orient="records"):
            std = rec["std"] if rec["std"] == rec["std"] else None  # none when pooled
            rows.append((model, rec["base_rates"], rec["direction"],
                         format_value(rec["mean"], std, (rec["ci_low"], rec["ci_high"]))))
        for rec in res.by_group.to_dict(orient="records"):
            rows.append((model, rec["base_rates"], rec["direction"], f"group {rec['group']}: "
                         + format_value(rec["mean"], ci=(rec["ci_low"], rec["ci_high"]))))
    w_src = max((len(str(r[1])) for r in rows), default=0)
    w_dir = max((len(str(r[2])) for r in rows), default=0)
    lines, shown = [], None
    for model, source, direction, text in rows:
        if model != shown:
            lines.append(f"{model}:")
            shown = model
        lines.append(f"  {source:<{w_src}}  {direction:<{w_dir}}  {text}")
    if any("[n/a" in r[3] for r in rows):
        lines.append("n/a: no confidence interval: fewer than 2 templates to resample, or "
                     "every bootstrap replicate gave the same value (zero width)")
    return lines


def run(args) -> int:
    from ..pipeline import probe_many
    from . import report_file, say_report, work_done

    cfg = build_config(args)
    results = probe_many(cfg, progress=getattr(args, "display", None) or False)
    work_done(args)
    if not args.quiet:
        print("\n".join(summary_lines(cfg.models, results)))
    say_report(report_file(cfg.out, cfg.formats, comparison=len(cfg.models) > 1), args)
    return 0
