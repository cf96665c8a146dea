"""The subcommands that load a model: ``probe``, ``score`` and ``pairs``.

long on purpose: three commands, each with its options and its printed summary.
"""

from __future__ import annotations

from .._conventions import BLANK
from .._errors import BiasampError
from . import add_config_options, add_out, print_table, report_file, say_report, work_done


def probe(p) -> None:
    """``biasamp probe``: model -> Table-2-style BiasAmp-> results, plots and reports."""
    p.description = (
        "Score fill-in-the-blank templates with a masked or causal (decoder-only) language "
        "model and report BiasAmp-> per base-rate source and direction (mean, population std "
        "and bootstrap CI over templates), the per-(task, attribute) disaggregation, the "
        "tokenisation audit and plots. Options given here override --config."
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="TOML or YAML file with probe options (see examples/probe.toml); flags override it",
    )
    # every other option is a ProbeConfig field (help, default, check and flag declared there)
    add_config_options(p, from_config=True)
    p.set_defaults(func=run_probe)


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
    direction) and per group, numbers by :func:`biasamp.report.format_value`; ``n/a``
    explained once at the end."""
    import pandas as pd

    from ..report import format_value
    from . import table_lines

    rows = []  # (model, source, direction, text)
    for model, res in zip(models, results):
        for rec in [*res.summary.to_dict("records"), *res.by_group.to_dict("records")]:
            std = None if pd.isna(rec.get("std")) else rec["std"]  # none for a group, or pooled
            text = format_value(rec["mean"], std, (rec["ci_low"], rec["ci_high"]))
            group = f"group {rec['group']}: " if "group" in rec else ""
            rows.append((model, rec["base_rates"], rec["direction"], group + text))
    table = table_lines([r[1:] for r in rows], left={0, 1, 2})
    lines, shown = [], None
    for (model, *_), line in zip(rows, table):
        if model != shown:
            lines.append(f"{model}:")
            shown = model
        lines.append(line)
    if any("[n/a" in r[3] for r in rows):
        lines.append(
            "n/a: no confidence interval: fewer than 2 templates to resample, or "
            "every bootstrap replicate gave the same value (zero width)"
        )
    return lines


def run_probe(args) -> int:
    from ..pipeline import probe_many

    cfg = build_config(args)
    results = probe_many(cfg, progress=args.display)
    work_done(args)
    if not args.quiet:
        print("\n".join(summary_lines(cfg.models, results)))
    say_report(report_file(cfg.out, cfg.formats, comparison=len(cfg.models) > 1), args)
    return 0


def score(p) -> None:
    """``biasamp score``: score candidate fillers of a blank with a masked or causal LM."""
    p.description = (
        "Print, for each prompt and candidate, the log probability under the estimator, the "
        "probability renormalised over the candidates, and the raw probability mass the "
        'candidates cover. Example: biasamp score --model bert-base-uncased --prompt "he is '
        'a good [BLANK]." --candidates nurse,doctor'
    )
    p.add_argument("--model", "-m", required=True, help="Hugging Face model id or local folder")
    p.add_argument(
        "--prompt",
        "-p",
        action="append",
        required=True,
        dest="prompts",
        metavar="TEXT",
        help=f"prompt containing {BLANK} once; repeat for several",
    )
    p.add_argument(
        "--candidates",
        "-c",
        required=True,
        metavar="LIST",
        help="comma-separated candidates (may contain spaces: 'he is,she is')",
    )
    p.add_argument("--blank", default=BLANK, help=f"blank marker (default {BLANK})")
    p.add_argument(
        "--audit", action="store_true", help="also print how the tokenizer splits each candidate"
    )
    add_config_options(p, groups=("model",), only=("model_type", "scoring", "context_token"))
    add_config_options(p, groups=("loading the model",))
    p.set_defaults(func=run_score)


def _split_candidates(text):
    parts = [c.strip() for c in text.split(",")]
    if not any(parts):
        raise BiasampError(f"--candidates must list at least one word; got {text!r}")
    empty = [i for i, c in enumerate(parts) if not c]
    if empty:
        raise BiasampError(
            f"--candidates has an empty entry at position {empty[0] + 1}; got {text!r}"
        )
    return parts


def run_score(args) -> int:
    from ..pipeline import ProbeConfig
    from ..scoring import LoadOptions, check_score_inputs, load_scorer, preflight

    candidates = _split_candidates(args.candidates)
    # every check before the model loads (the options as a probe checks them, then the
    # early-check pass: the model's kind, the estimator, the context token, the device)
    check_score_inputs(args.prompts, candidates, blank=args.blank)
    cfg = ProbeConfig.from_cli(args)
    options = LoadOptions.of(cfg)
    ((resolved, scoring),) = preflight(
        [args.model],
        options,
        model_type=cfg.model_type,
        scoring=cfg.scoring,
        context_token=cfg.context_token,
    ).values()
    kind = resolved.model_type
    extra = {"context_token": cfg.context_token} if kind == "causal" else {}
    scorer = load_scorer(resolved, options, progress=args.display, **extra)
    scorer.progress.stage(
        "scoring",
        scorer.count_contexts(args.prompts, candidates, scoring=scoring, blank=args.blank),
        scorer.count_unit,
    )
    result = scorer.score(args.prompts, candidates, scoring=scoring, blank=args.blank)
    work_done(args)
    table = result.to_frame()
    print(
        f"model {args.model} ({kind} LM)  scoring {result.scoring}  device "
        f"{scorer.provenance['device']}  dtype {scorer.provenance['dtype']}"
    )
    for i, prompt in enumerate(args.prompts):
        print(f"\n{prompt}    (mass covered: {result.mass[i]:.6g})")
        rows = table[table["prompt_index"] == i]
        print_table(
            [
                (c, f"{lp:.6f}", f"{pr:.6f}")
                for c, lp, pr in zip(rows["candidate"], rows["log_prob"], rows["prob"])
            ],
            header=("candidate", "log_prob", "prob"),
            left={0},
            widths={1: 12, 2: 9},
        )
    if args.audit:
        print("\ntokenisation audit")
        print_table(
            [
                (
                    r.candidate,
                    r.n_pieces,
                    " ".join(r.pieces),
                    ", ".join(r.shares_first_piece_with) or "-",
                )
                for r in scorer.audit(candidates, blank=args.blank).itertuples(index=False)
            ],
            header=("candidate", "n", "pieces", "shares first piece with"),
            left={0, 2, 3},
            widths={2: 30},
        )
    return 0


def pairs(p) -> None:
    """``biasamp pairs``: CrowS-Pairs-style sentence pairs scored with a masked or causal LM."""
    from ..pairs import DEFAULT_COLUMNS, list_pair_sets

    p.description = (
        "Score each pair of sentences by the pseudo-log-likelihood of the tokens they share, "
        "masked one at a time (a masked LM, Nangia et al. 2020), or by the log-likelihood of "
        "the whole sentence after the model's document-start token (a causal LM, as "
        "lm-evaluation-harness' crows_pairs tasks), and report the share of pairs where the "
        "model prefers the more stereotypical sentence (50%% = no preference), overall, per "
        "direction and per bias type, with bootstrap CIs over pairs; for a causal LM also "
        "lm-eval's pct_stereotype and likelihood_diff. Sentences come from a file (CSV, TSV, "
        "JSON or JSONL), never from the command line."
    )
    p.add_argument("--model", "-m", required=True, help="Hugging Face model id or local folder")
    p.add_argument(
        "--pairs",
        default="crows-pairs",
        metavar="SET",
        help=f"pair set [{', '.join(list_pair_sets())}] or a CSV/TSV/JSON/JSONL file "
        "(default crows-pairs)",
    )
    # --KEY-column names load_pairs' KEY= column (the flag its messages name)
    id_default = "CrowS-Pairs' unnamed first column, else the row number"
    for key, default in (DEFAULT_COLUMNS | {"pair_id": id_default}).items():
        p.add_argument(
            f"--{key.replace('_', '-')}-column",
            dest=f"{key}_column",
            metavar="NAME",
            help=f"column of the file holding the {key} field (default {default})",
        )
    p.add_argument(
        "--bias-type",
        dest="bias_types",
        action="append",
        metavar="TYPE",
        help="only pairs of this bias type; repeat for several",
    )
    p.add_argument(
        "--max-pairs",
        type=int,
        metavar="N",
        help="only the first N pairs (quick runs)",
    )
    add_out(
        p,
        "write pairs.json, pair_scores.csv and pair_summary.csv into this new folder",
        "the pairs result --out holds (one biasamp wrote)",
        metavar="DIR",
    )
    # over pairs: the bootstrap options of a probe; a causal LM's context token
    add_config_options(p, groups=("bootstrap",), only=("seed", "n_resamples", "confidence"))
    add_config_options(p, groups=("model",), only=("model_type", "context_token"))
    # pairs are scored without the cache
    add_config_options(p, groups=("loading the model",), without=("--score-cache",))
    p.set_defaults(func=run_pairs)


def run_pairs(args) -> int:
    from .._output import OutputFolder
    from ..pairs import DEFAULT_COLUMNS, load_pairs, score_pairs
    from ..pipeline import ProbeConfig
    from ..report import format_value
    from ..scoring import LoadOptions

    # everything that can fail on input fails before the model is loaded (score_pairs checks
    # the model, the context token and the device before it loads the weights)
    pset = load_pairs(
        args.pairs, **{k: getattr(args, f"{k}_column") for k in (*DEFAULT_COLUMNS, "pair_id")}
    )
    pset = pset.select(bias_types=args.bias_types, max_pairs=args.max_pairs)
    if len(pset) == 0:
        raise BiasampError(f"--pairs {args.pairs!r} with the selection given holds no pairs")
    options = LoadOptions.of(ProbeConfig.from_cli(args))
    output = None
    if args.out:
        output = OutputFolder(args.out, kind="pairs", overwrite=args.overwrite)
        output.check()
    res = score_pairs(
        pset,
        args.model,
        options=options,
        model_type=args.model_type,
        context_token=args.context_token,
        progress=args.display,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
    )
    work_done(args)
    if not args.quiet:
        prov = res.provenance
        causal = "pct_stereotype" in res.summary
        scored = (
            f"{prov.n_contexts:,} sentences, {prov.n_contexts_run:,} distinct ones run, each "
            f"after {prov.scorer.context.token!r}"
            if causal
            else f"{prov.n_contexts:,} masked contexts, {prov.n_contexts_run:,} distinct ones run"
        )
        print(
            f"{args.model}: {len(pset)} pairs of {pset.name} ({scored}); share of pairs where "
            f"the more stereotypical sentence is preferred [{args.confidence:.0%} CI]"
            + ("; lm-eval's pct_stereotype and likelihood_diff:" if causal else ":")
        )
        rows = []
        for r in res.summary.itertuples(index=False):
            share = format_value(r.share_more, ci=(r.ci_low, r.ci_high))
            if r.kind != "bias_type":
                excluding = format_value(r.share_more_excluding_neutral)
                share += f"; excluding {r.n_neutral} neutral: {excluding}"
            rows.append([r.group, f"{r.n_pairs} pairs", share])
            if causal:
                rows[-1] += [
                    f"pct_stereotype {format_value(r.pct_stereotype)}",
                    f"likelihood_diff {r.likelihood_diff:.3f}",
                ]
        print_table(rows, left={0, 2}, widths={0: 19, 1: 11})
    if output is not None:
        say_report(res.save(output) / "pairs.json", args)
    return 0
