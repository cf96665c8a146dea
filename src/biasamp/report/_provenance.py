"""The provenance lines of a report: model and its weights, context, estimator, templates,
base rates, versions (read from :class:`~biasamp.results.Provenance` by attribute)."""

from __future__ import annotations

from ..results import Provenance
from ._format import direction_label

__all__ = ["measured_with", "provenance_lines"]

#: weight files named one by one in the report (results.json lists every one)
_N_WEIGHT_FILES = 4


def provenance_lines(p: Provenance) -> tuple[str, ...]:
    m, s, tpl = p.model, p.scorer, p.templates
    lines = [
        (f"model: `{m.name}` (revision: `{m.revision or 'default'}`"
         + (f", commit `{m.commit}`)" if m.commit else ")")),
        *_weights_lines(m.weights_sha256),
        (f"device / dtype: {s.device} / {s.dtype}; model type: "
         f"{m.model_type} LM; estimator (scoring): "
         f"`{s.estimator}`; compat: {f'`{p.compat}`' if p.compat else 'none'}; seed: {p.seed}"),
        *_context_lines(p),
        (f"templates: `{tpl.name}` ({tpl.n_templates} templates, prompts sha256 "
         f"`{tpl.prompts_sha256[:16]}…`)"),
        f"tasks: `{p.tasks.name}`; attributes: {', '.join(p.attributes)}",
    ]
    seen: dict[tuple, list[str]] = {}
    for source, by_direction in p.base_rates.items():
        for direction, b in by_direction.items():
            seen.setdefault((source, b.citation or b.name, b.file_sha256), []).append(
                direction_label(direction))
    for (source, cite, sha), dirs in seen.items():
        lines.append(f"base rates `{source}` ({', '.join(dirs)}): {cite} "
                     f"(sha256 `{sha[:16]}…`)")
    lines.append("versions: " + ", ".join(f"{k} {val}" for k, val in sorted(p.versions.items())))
    lines.append(f"created: {p.timestamp}")
    return tuple(lines)


def _weights_lines(weights: dict) -> tuple[str, ...]:
    """The sha256 of the weight files the scores came from (none recorded: none shown)."""
    if not weights:
        return ()
    named = sorted(weights.items())
    more = len(named) - _N_WEIGHT_FILES
    return ("weights sha256: " + ", ".join(
        f"`{name}` `{sha[:16]}…`" for name, sha in named[:_N_WEIGHT_FILES])
        + (f" and {more} more files (all in results.json)" if more > 0 else ""),)


def _context_lines(p: Provenance) -> tuple[str, ...]:
    """The causal LM's context token and the rule that chose it (none for a masked LM)."""
    c = p.scorer.context
    if c is None:
        return ()
    line = f"context before each sentence: `{c.token}` ({c.rule})"
    if c.skipped:
        line += "; passed over as chat markers: " + ", ".join(f"`{t}`" for t in c.skipped)
    if c.chat_template:
        line += ("; a chat model probed as a plain LM (sentences as text, not in a chat turn): "
                 "its numbers describe how it continues text, not its answers in a conversation")
    return (line,)


def measured_with(p: Provenance) -> str:
    tpl = p.templates
    return (f"Measured with biasamp {p.versions.get('biasamp', '')} on "
            f"`{p.model.name}` using fill-in-the-blank templates `{tpl.name}` "
            f"({tpl.n_templates} templates), tasks `{p.tasks.name}` "
            f"and attributes {', '.join(p.attributes)} "
            "(Wang & Russakovsky, *Directional Bias Amplification*, ICML 2021).")
