"""The provenance lines of a report: model, context, estimator, templates, base rates, versions."""

from __future__ import annotations

from ._format import direction_label

__all__ = ["measured_with", "provenance_lines"]


def provenance_lines(p: dict) -> tuple[str, ...]:
    v = p.get("versions", {})
    tpl = p.get("templates", {})
    commit = (p.get("scorer") or {}).get("commit")
    lines = [
        (f"model: `{p.get('model')}` (revision: `{p.get('revision') or 'default'}`"
         + (f", commit `{commit}`)" if commit else ")")),
        (f"device / dtype: {p.get('device')} / {p.get('dtype')}; model type: "
         f"{p.get('model_type') or 'masked'} LM; estimator (scoring): "
         f"`{p.get('estimator')}`; compat: `{p.get('compat')}`; seed: {p.get('seed')}"),
        *_context_lines(p.get("scorer") or {}),
        (f"templates: `{tpl.get('name')}` ({tpl.get('n_templates')} templates, prompts sha256 "
         f"`{str(tpl.get('prompts_sha256', ''))[:16]}…`)"),
        (f"tasks: `{p.get('tasks', {}).get('name')}`; attributes: "
         f"{', '.join(map(str, p.get('attributes', [])))}"),
    ]
    seen: dict[tuple, list[str]] = {}
    for key, bp in (p.get("base_rates") or {}).items():
        sha = str(bp.get("sha256") or bp.get("joint_sha256") or "")
        source, _, direction = key.partition("|")
        cite = bp.get("citation") or bp.get("name") or ""
        seen.setdefault((source, cite, sha), []).append(direction_label(direction))
    for (source, cite, sha), dirs in seen.items():
        lines.append(f"base rates `{source}` ({', '.join(dirs)}): {cite} "
                     f"(sha256 `{sha[:16]}…`)")
    lines.append("versions: " + ", ".join(f"{k} {val}" for k, val in sorted(v.items())))
    lines.append(f"created: {p.get('timestamp')}")
    return tuple(lines)


def _context_lines(scorer: dict) -> tuple[str, ...]:
    """The causal LM's context token and the rule that chose it (none for a masked LM)."""
    if "context_token" not in scorer:
        return ()
    line = (f"context before each sentence: `{scorer['context_token']}` "
            f"({scorer.get('context_rule', 'the BOS or EOS')})")
    if scorer.get("context_skipped"):
        line += "; passed over as chat markers: " + ", ".join(
            f"`{t}`" for t in scorer["context_skipped"])
    if scorer.get("chat_template"):
        line += ("; a chat model probed as a plain LM (sentences as text, not in a chat turn): "
                 "its numbers describe how it continues text, not its answers in a conversation")
    return (line,)


def measured_with(p: dict) -> str:
    tpl = p.get("templates", {})
    return (f"Measured with biasamp {p.get('versions', {}).get('biasamp', '')} on "
            f"`{p.get('model')}` using fill-in-the-blank templates `{tpl.get('name')}` "
            f"({tpl.get('n_templates')} templates), tasks `{p.get('tasks', {}).get('name')}` "
            f"and attributes {', '.join(map(str, p.get('attributes', [])))} "
            "(Wang & Russakovsky, *Directional Bias Amplification*, ICML 2021).")
