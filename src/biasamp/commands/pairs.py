"""``biasamp pairs``: CrowS-Pairs-style sentence pairs scored with a masked LM."""

from __future__ import annotations

from .._errors import BiasampError
from .._output import OutputFolder


def register(subparsers) -> None:
    from ..pairs import list_pair_sets
    from . import add_config_options, add_model_options

    p = subparsers.add_parser(
        "pairs", help="score sentence pairs (CrowS-Pairs) with a masked language model",
        description="Score each pair of sentences by the pseudo-log-likelihood of the tokens "
                    "they share, masked one at a time (Nangia et al. 2020), and report the "
                    "share of pairs where the model prefers the more stereotypical sentence "
                    "(50%% = no preference), overall, per direction and per bias type, with "
                    "bootstrap CIs over pairs. Sentences come from a file (CSV, TSV, JSON or "
                    "JSONL), never from the command line.")
    p.add_argument("--model", "-m", required=True, help="Hugging Face model id or local folder")
    p.add_argument("--pairs", default="crows-pairs", metavar="SET",
                   help=f"pair set [{', '.join(list_pair_sets())}] or a CSV/TSV/JSON/JSONL file "
                        "(default crows-pairs)")
    # --KEY-column names load_pairs' KEY= column (the flag its messages name)
    for key, default in (("more", "sent_more"), ("less", "sent_less"),
                         ("direction", "stereo_antistereo"), ("bias_type", "bias_type"),
                         ("pair_id", "CrowS-Pairs' unnamed first column, else the row number")):
        flags = [f"--{key.replace('_', '-')}-column"]
        if key == "bias_type":
            flags.append("--type-column")  # its name before 0.3, still accepted
        p.add_argument(*flags, dest=f"{key}_column", metavar="NAME",
                       help=f"column of the file holding the {key} field (default {default})")
    p.add_argument("--bias-type", dest="bias_types", action="append", metavar="TYPE",
                   help="only pairs of this bias type; repeat for several")
    p.add_argument("--max-pairs", dest="max_pairs", type=int, metavar="N",
                   help="only the first N pairs (quick runs)")
    p.add_argument("--out", "-o", metavar="DIR",
                   help="write pairs.json, pair_scores.csv and pair_summary.csv into this new "
                        "folder")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the pairs result --out holds (one biasamp wrote)")
    # over pairs: the bootstrap options of a probe
    add_config_options(p, groups=("bootstrap",), only=("seed", "n_resamples", "confidence"))
    add_model_options(p, without=("--score-cache",))  # pairs are scored without the cache
    p.set_defaults(func=run)


def run(args) -> int:
    from ..pairs import load_pairs, score_pairs
    from ..report import format_value
    from ..scoring import check_model
    from . import say_report, work_done

    # everything that can fail on input fails before the model is loaded
    pset = load_pairs(args.pairs, more=args.more_column, less=args.less_column,
                      direction=args.direction_column, bias_type=args.bias_type_column,
                      pair_id=args.pair_id_column)
    pset = pset.select(bias_types=args.bias_types, max_pairs=args.max_pairs)
    if len(pset) == 0:
        raise BiasampError(f"--pairs {args.pairs!r} with the selection given holds no pairs")
    check_model(args.model)
    output = None
    if args.out:
        output = OutputFolder(args.out, kind="pairs", overwrite=args.overwrite)
        output.check()
    res = score_pairs(pset, args.model, revision=args.revision, device=args.device,
                      dtype=args.dtype, batch_size=args.batch_size,
                      trust_remote_code=args.trust_remote_code,
                      progress=getattr(args, "display", None) or False,
                      device_map=args.device_map, max_memory=args.max_memory,
                      offload_folder=args.offload_folder, hf_cache_dir=args.hf_cache_dir,
                      allow_missing_weights=args.allow_missing_weights,
                      n_resamples=args.n_resamples, seed=args.seed, confidence=args.confidence)
    work_done(args)
    if not args.quiet:
        prov = res.provenance
        print(f"{args.model}: {len(pset)} pairs of {pset.name} ({prov.n_contexts:,} masked "
              f"contexts, {prov.n_contexts_run:,} distinct ones run); share of pairs where "
              f"the more stereotypical sentence is preferred [{args.confidence:.0%} CI]:")
        for r in res.summary.itertuples(index=False):
            excl = "" if r.kind == "bias_type" else (
                f"; excluding {r.n_neutral} neutral: {format_value(r.share_more_excluding_neutral)}")
            print(f"  {r.group:<20} {r.n_pairs:>5} pairs  "
                  f"{format_value(r.share_more, ci=(r.ci_low, r.ci_high))}{excl}")
    if output is not None:
        say_report(res.save(output) / "pairs.json", args)
    return 0
