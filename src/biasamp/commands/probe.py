"""``biasamp probe``: model -> Table-2-style BiasAmp-> results, plots and reports."""

from __future__ import annotations

import sys

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

    overrides = {opt.name: getattr(args, opt.name) for opt in ProbeConfig.options()
                 if getattr(args, opt.name, None) is not None}
    if args.config:
        cfg = ProbeConfig.from_file(args.config, **overrides)
    else:
        cfg = ProbeConfig(**overrides)
    if not cfg.models:
        raise BiasampError("--model is required (or 'models' in --config); got none")
    if not cfg.out:
        raise BiasampError("--out is required (or 'out' in --config); got none")
    return cfg


def run(args) -> int:
    from ..pipeline import probe_many
    from ..report import format_value

    cfg = build_config(args)
    cfg.progress = not args.quiet
    results = probe_many(cfg)
    if not args.quiet:
        for model, res in zip(cfg.models, results):
            print(f"{model}:")
            for rec in res.summary.to_dict(orient="records"):
                std = rec["std"] if rec["std"] == rec["std"] else None  # none when pooled
                print(f"  {rec['base_rates']:<24} {rec['direction']:<18} "
                      f"{format_value(rec['mean'], std, (rec['ci_low'], rec['ci_high']))}")
            for rec in res.by_group.to_dict(orient="records"):
                print(f"  {rec['base_rates']:<24} {rec['direction']:<18} group {rec['group']}: "
                      f"{format_value(rec['mean'], ci=(rec['ci_low'], rec['ci_high']))}")
        print(f"results written to {cfg.out}", file=sys.stderr)
    return 0
