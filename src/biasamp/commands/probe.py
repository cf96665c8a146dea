"""``biasamp probe``: model -> Table-2-style BiasAmp-> results, plots and reports."""

from __future__ import annotations

import sys

from .._errors import BiasampError

# CLI flag -> ProbeConfig field (values None = "not given": the config file or default wins)
_FLAGS = ("templates", "attributes", "tasks", "base_rates", "scoring", "model_type", "compat",
          "device", "device_map", "max_memory", "offload_folder", "dtype", "batch_size",
          "revision", "context_token", "seed", "n_resamples", "confidence", "resample",
          "base_uncertainty", "min_base_count", "max_templates",
          "score_cache", "hf_cache_dir", "out", "formats", "tables", "note")


def register(subparsers) -> None:
    from ..base_rates import list_sources
    from ..scoring import estimators_for
    from ..tasks import list_task_sets
    from ..templates import list_template_sets
    from . import add_model_options

    templates, tasks = ", ".join(list_template_sets()), ", ".join(list_task_sets())
    sources = ", ".join(list_sources())
    p = subparsers.add_parser(
        "probe", help="measure BiasAmp-> of one or more masked or causal language models",
        description="Score fill-in-the-blank templates with a masked or causal (decoder-only) "
                    "language model and report "
                    "BiasAmp-> per base-rate source and direction (mean, population std and "
                    "bootstrap CI over templates), the per-(task, attribute) disaggregation, the "
                    "tokenisation audit and plots. Options given here override --config.")
    p.add_argument("--config", metavar="FILE", help="TOML or YAML file with probe options "
                   "(see examples/probe.toml); flags override it")
    p.add_argument("--model", "-m", dest="models", action="append", metavar="MODEL",
                   help="Hugging Face model id or local model folder; repeat (or comma-separate) "
                        "for several models (one sub-directory each, plus a comparison)")
    p.add_argument("--templates", metavar="SET", help=f"template set or file [{templates}] "
                   "(default adjectives)")
    p.add_argument("--attributes", metavar="LIST", help="comma-separated attributes "
                   "(default he,she)")
    p.add_argument("--tasks", metavar="VOCAB", help=f"task vocabulary or file [{tasks}] "
                   "(default: the set's own tasks for winogender/winobias and other sets of "
                   "bound templates, else winobias32)")
    p.add_argument("--base-rates", dest="base_rates", metavar="LIST",
                   help=f"comma-separated base-rate sources or file:PATH.csv [{sources}] "
                        "(default uniform,labor-2016)")
    masked, causal = estimators_for("masked"), estimators_for("causal")
    p.add_argument("--scoring", metavar="MODE",
                   help=f"candidate estimator; masked LMs: {', '.join(masked)} (default "
                        f"{masked[0]}); causal LMs: {', '.join(causal)} (default {causal[0]})")
    p.add_argument("--model-type", dest="model_type", metavar="TYPE",
                   help="auto (from the model's config.json), masked or causal (default auto)")
    p.add_argument("--compat", metavar="MODE", help="wang2021: reproduce the paper's procedure "
                   "(its templates, first-piece scoring, its base-rate constructions; masked "
                   "LMs only)")
    add_model_options(p, from_config=True)
    p.add_argument("--context-token", dest="context_token", metavar="TOKEN",
                   help="causal LMs: the token before every sentence (default: a document "
                        "start, never a chat marker; e.g. '<|endoftext|>')")
    p.add_argument("--seed", type=int, help="bootstrap seed (default 0)")
    p.add_argument("--n-resamples", dest="n_resamples", type=int, metavar="N",
                   help="bootstrap resamples over templates (default 10000)")
    p.add_argument("--confidence", type=float, help="bootstrap CI level (default 0.95)")
    p.add_argument("--resample", metavar="UNITS", help="what the bootstrap resamples: templates "
                   "(default), tasks or both (two-way)")
    p.add_argument("--base-uncertainty", dest="base_uncertainty", metavar="MODE",
                   help="resample (default): count-based base rates are resampled jointly, so "
                        "CIs cover their sampling error; none: base tables are exact")
    p.add_argument("--min-base-count", dest="min_base_count", type=int, metavar="N",
                   help="leave out tasks with fewer than N co-occurrences in a count-based "
                        "source (reported)")
    p.add_argument("--max-templates", dest="max_templates", type=int, metavar="N",
                   help="use only the first N templates (quick runs; of each task for a set "
                        "of bound templates such as winobias)")
    p.add_argument("--out", "-o", metavar="DIR", help="output directory (required; refused when "
                   "it exists and is not empty, unless --overwrite)")
    p.add_argument("--overwrite", action="store_true", default=None,
                   help="replace the probe result --out holds (one biasamp wrote) as a whole")
    p.add_argument("--format", dest="formats", metavar="LIST",
                   help="reports to write: md,html,json,model-card (default md,html,json)")
    p.add_argument("--tables", metavar="FMT", help="probability tables as csv or parquet "
                   "(parquet needs pyarrow; default csv)")
    p.add_argument("--note", metavar="TEXT", help="a note shown at the top of every report")
    p.set_defaults(func=run)


def build_config(args):
    """ProbeConfig from --config (if any) with the given flags on top."""
    from ..pipeline import ProbeConfig

    overrides = {k: getattr(args, k) for k in _FLAGS if getattr(args, k, None) is not None}
    if args.trust_remote_code:
        overrides["trust_remote_code"] = True
    if args.overwrite:
        overrides["overwrite"] = True
    if args.allow_missing_weights:
        overrides["allow_missing_weights"] = True
    if args.models:
        overrides["models"] = args.models
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
