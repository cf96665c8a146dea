"""``biasamp score``: score candidate fillers of a blank with a masked or causal LM; a table."""

from __future__ import annotations

import sys

from .._conventions import BLANK
from .._errors import BiasampError


def register(subparsers) -> None:
    from . import add_config_options, add_model_options

    p = subparsers.add_parser(
        "score", help="score candidate words for a blank with a masked or causal language model",
        description="Print, for each prompt and candidate, the log probability under the "
                    "estimator, the probability renormalised over the candidates, and the raw "
                    "probability mass the candidates cover. Example: biasamp score --model "
                    "bert-base-uncased --prompt \"he is a good [BLANK].\" --candidates "
                    "nurse,doctor")
    p.add_argument("--model", "-m", required=True, help="Hugging Face model id or local folder")
    p.add_argument("--prompt", "-p", action="append", required=True, dest="prompts",
                   metavar="TEXT", help=f"prompt containing {BLANK} once; repeat for several")
    p.add_argument("--candidates", "-c", required=True, metavar="LIST",
                   help="comma-separated candidates (may contain spaces: 'he is,she is')")
    p.add_argument("--blank", default=BLANK, help=f"blank marker (default {BLANK})")
    p.add_argument("--audit", action="store_true",
                   help="also print how the tokenizer splits each candidate")
    add_config_options(p, groups=("model",), only=("model_type", "scoring", "context_token"))
    add_model_options(p)
    p.set_defaults(func=run)


def _split_candidates(text):
    parts = [c.strip() for c in text.split(",")]
    if not any(parts):
        raise BiasampError(f"--candidates must list at least one word; got {text!r}")
    empty = [i for i, c in enumerate(parts) if not c]
    if empty:
        raise BiasampError(f"--candidates has an empty entry at position {empty[0] + 1}; got "
                           f"{text!r}")
    return parts


def run(args) -> int:
    from ..scoring import check_score_inputs, load_scorer, resolve_model
    from . import work_done

    candidates = _split_candidates(args.candidates)
    # validate before loading the model: input errors come back at once; the estimator once
    # the model's type is known (from its config.json alone)
    check_score_inputs(args.prompts, candidates, blank=args.blank)
    resolved = resolve_model(args.model, args.model_type, revision=args.revision,
                             hf_cache_dir=args.hf_cache_dir,
                             trust_remote_code=args.trust_remote_code)
    kind = resolved.model_type
    scoring = check_score_inputs(args.prompts, candidates, scoring=args.scoring, blank=args.blank,
                                 model_type=kind, model=args.model)[3]
    extra = {}
    if kind == "causal":
        extra = {"context_token": args.context_token}
    elif args.context_token is not None:
        raise BiasampError(f"--context-token is for causal language models; model "
                           f"{args.model!r} is a {kind} language model")
    scorer = load_scorer(resolved, revision=args.revision, device=args.device, dtype=args.dtype,
                         device_map=args.device_map, max_memory=args.max_memory,
                         offload_folder=args.offload_folder,
                         trust_remote_code=args.trust_remote_code, batch_size=args.batch_size,
                         score_cache=args.score_cache, hf_cache_dir=args.hf_cache_dir,
                         allow_missing_weights=args.allow_missing_weights,
                         progress=getattr(args, "display", None) or False,
                         **extra)
    scorer.progress.stage("scoring", scorer.count_contexts(
        args.prompts, candidates, scoring=scoring, blank=args.blank), scorer.count_unit)
    result = scorer.score(args.prompts, candidates, scoring=scoring, blank=args.blank)
    work_done(args)
    out = sys.stdout
    table = result.to_frame()
    width = max(len("candidate"), *(len(c) for c in candidates))
    print(f"model {args.model} ({kind} LM)  scoring {result.scoring}  device "
          f"{scorer.provenance['device']}  dtype {scorer.provenance['dtype']}", file=out)
    for i, prompt in enumerate(args.prompts):
        print(f"\n{prompt}    (mass covered: {result.mass[i]:.6g})", file=out)
        print(f"  {'candidate':<{width}}  {'log_prob':>12}  {'prob':>9}", file=out)
        rows = table[table["prompt_index"] == i]
        for cand, lp, pr in zip(rows["candidate"], rows["log_prob"], rows["prob"]):
            print(f"  {cand:<{width}}  {lp:>12.6f}  {pr:>9.6f}", file=out)
    if args.audit:
        audit = scorer.audit(candidates, blank=args.blank)
        print("\ntokenisation audit", file=out)
        print(f"  {'candidate':<{width}}  n  pieces{'':<24}  shares first piece with", file=out)
        for r in audit.itertuples(index=False):
            print(f"  {r.candidate:<{width}}  {r.n_pieces}  {' '.join(r.pieces):<30}  "
                  f"{', '.join(r.shares_first_piece_with) or '-'}", file=out)
    return 0
