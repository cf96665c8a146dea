"""The content of a report, computed once from a :class:`~biasamp.results.ProbeResult`: every
sentence a report says (texts inline Markdown, numbers through :func:`~._format.format_value`);
the templates only lay it out.

long on purpose: the sections, the notes, the provenance lines, the model-index metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..results import ProbeResult, Provenance
from ._format import degenerate_ci, direction_label, format_ci, format_value
from ._plots import PLOT_TITLES

#: How to read the numbers (the model card shows the first three).
CAVEATS = (
    (
        "**The value depends on the base-rate source.** BiasAmp→ measures how much the model "
        "*amplifies* a base correlation; every row names the source it was measured against "
        "(uniform, Wikipedia co-occurrence counts, US labor statistics, ...). Different sources "
        "can even disagree on the sign of the association for the same occupation."
    ),
    (
        "**T→A and A→T values are not comparable to each other.** T→A compares "
        "P(attribute | task) (a distribution over a few attributes), A→T compares "
        "P(task | attribute) (a distribution over all the tasks), so the A→T numbers are on a much "
        "smaller scale. Compare each direction only with itself (other models, other sources)."
    ),
    (
        "Values are means over fill-in-the-blank templates; the spread (population std, bootstrap "
        "CI over templates) shows how much they depend on the wording of the template."
    ),
    (
        "The model's probabilities are renormalised over the candidate words; the raw probability "
        "mass the candidates cover is reported with the results. Candidates that split into "
        "several word pieces are listed in the tokenisation audit."
    ),
    (
        "The attributes are words (pronouns), not people's genders; a binary he/she probe says "
        "nothing about non-binary identities unless `they` is included."
    ),
)

_SUMMARY_TEXT = (
    "Mean and population std (ddof=0) over templates; percentile bootstrap CI over "
    'what its row\'s "CI covers" names ("counts": the sentences of a '
    "count-based base-rate source, resampled jointly with the rest). A positive "
    "value means the model amplifies the base correlation."
)
_N_TOP_PAIRS = 5
_MASS_TEXT = (
    "Share of the model's probability that the candidates cover before "
    "renormalisation: for a one-piece candidate, its probability at the mask; for a "
    'candidate of several pieces (T->A spans such as "They are", split '
    "occupations), the chain-rule probability of the whole span, which is much smaller "
    "than a one-position share, so these masses are small by construction and only "
    "comparable within one estimator; for `pll` they are sums of pseudo-likelihoods, "
    "not probabilities."
)
_POOLED_TEXT = (
    " Templates bound to their own task (benchmark sentences such as Winogender or "
    "WinoBias) are pooled: T→A is measured on P(attribute | task) averaged over each "
    "task's own sentences (no std over templates), A→T on P(task | attribute) "
    "averaged over all sentences; the CI comes from a bootstrap that resamples "
    "templates within each task."
)
#: counts behind a task below which its base data is called "little"
LITTLE_DATA = 10
#: a base bias at least this share of the CI's width is told in the report
NOTABLE_BIAS = 0.1
#: weight files named one by one in the report (results.json lists every one)
_N_WEIGHT_FILES = 4
#: Where the biasamp source that measured the numbers is described (the hub needs a URL with a
#: source name).
SOURCE_URL = "https://pypi.org/project/biasamp/"
_SHORT = {"task_to_attribute": "t2a", "attribute_to_task": "a2t"}
#: the columns of the tokenisation audit shown, those of them the audit has
_AUDIT_COLUMNS = ("candidate", "pieces", "n_pieces", "first_piece", "shares_first_piece_with")


@dataclass(frozen=True, eq=False)
class Section:
    """One part of a report (its texts inline Markdown)."""

    title: str = ""  # its heading
    intro: str = ""  # a sentence before the table
    table: pd.DataFrame | None = None  # formatted (strings); None: nothing to tabulate
    empty: str = ""  # shown instead of the table when there is none
    bullets: tuple[str, ...] = ()  # above a table as notes, else a list
    text: str = ""  # a paragraph after the table
    footer: str = ""  # a pointer to the data files
    data: Any = None  # the machine-readable content (JSON-ready), for report.json


def build_sections(result: ProbeResult) -> dict[str, Any]:
    """The parts of ``result``'s report, in report order (None: a part not shown)."""
    doc = result.to_json_dict()
    prov, mass = result.provenance, doc["mass"]
    conf = prov.bootstrap.confidence
    notes = []
    missing = prov.model.missing_weights
    if missing:
        notes.append(
            f"WARNING: {len(missing)} weight(s) of this model were missing from its checkpoint "
            f"and initialised at random (--allow-missing-weights): {', '.join(missing[:6])}"
            f"{', ...' if len(missing) > 6 else ''}. These numbers do not describe a trained "
            "model."
        )
    if prov.note:
        notes.append(prov.note)
    pooled = "pooled" in set(result.summary.get("aggregation", ()))
    top = _top_rows(result.by_pair)
    unavailable = _unavailable_lines(
        result.summary,
        ("summary CIs", result.summary, "ci_low", "ci_high"),
        ("group CIs", result.by_group, "ci_low", "ci_high"),
        ("largest-contribution CIs", top, "contribution_ci_low", "contribution_ci_high"),
        ("sign-agreement CIs", result.sign_agreement, "ci_low", "ci_high"),
    )
    rows, base_notes = _base_rates_parts(prov, result.summary)
    agree = result.sign_agreement
    agree_table = pd.DataFrame(
        {
            "direction": agree["direction"].map(direction_label),
            "source a": agree["source_a"],
            "source b": agree["source_b"],
            f"agreement [{conf:.0%} CI]": _with_ci(agree, "agreement", digits=2),
            "cells": agree["n_cells"],
        }
    )
    mass_rows = [
        {
            "direction": direction_label(d),
            **{k: (f"{v:.3g}" if k != "n_prompts" else v) for k, v in m.items()},
        }
        for d, m in mass.items()
    ]
    return dict(
        title=f"BiasAmp→ report: `{prov.model.name}`",
        about=(
            f"Measured with biasamp {prov.versions.get('biasamp', '')} on "
            f"`{prov.model.name}` using fill-in-the-blank templates `{prov.templates.name}` "
            f"({prov.templates.n_templates} templates), tasks `{prov.tasks.name}` "
            f"and attributes {', '.join(prov.attributes)} "
            "(Wang & Russakovsky, *Directional Bias Amplification*, ICML 2021)."
        ),
        notes=tuple(notes),
        summary=Section(
            "Summary",
            table=_headline(result.summary, conf),
            text=_SUMMARY_TEXT + (_POOLED_TEXT if pooled else ""),
            data=doc["summary"],
        ),
        groups=None if result.by_group.empty else _groups_section(result.by_group, prov, doc),
        undefined=_note("Undefined cells.", _undefined_lines(result)),
        unavailable=_note("Unavailable intervals.", unavailable),
        support=_note("Evidence behind the base associations.", _support_lines(result)),
        base_rates=Section(
            "Base rates", bullets=base_notes, data=rows, table=pd.DataFrame(rows) if rows else None
        ),
        plots={} if result.by_pair.empty else dict(PLOT_TITLES),  # in PLOT_KINDS order
        contributions=Section(
            "Largest contributions",
            intro=(
                f"The {_N_TOP_PAIRS} largest |contributions| of each source and direction "
                "(the directions are on different scales)."
            ),
            table=_top_pairs(top),
            footer=(
                (
                    '"(unsupported)": the counts do not support the sign of this '
                    "association (see above). "
                    if top["sign_supported"].eq(False).any()  # false, not null (not measured)
                    else ""
                )
                + "Full disaggregation: `by_pair.csv`."
            ),
        ),
        sign_agreement=Section(
            "Sign agreement of the association between sources",
            intro=(
                "Share of (task, attribute) cells on which two sources give the "
                "association the same sign; the CI reflects the resampled base "
                "counts (n/a when both sources are exact: nothing is resampled)."
            ),
            table=None if agree.empty else agree_table,
            data=doc["sign_agreement"],
        ),
        mass=Section(
            "Raw candidate probability mass",
            intro=_MASS_TEXT,
            table=pd.DataFrame(mass_rows) if mass_rows else None,
            data=mass,
        ),
        audit=_audit_section(result.audit),
        caveats=Section("Caveats", bullets=CAVEATS),
        provenance=Section("Provenance", bullets=_provenance_lines(prov), data=doc["provenance"]),
        model_index=_model_index(doc["summary"], prov),
    )


def _note(title: str, bullets: tuple[str, ...]) -> Section | None:
    """A short note (a bold title and bullets), shown only when it says something."""
    return Section(title, bullets=bullets) if bullets else None


def _headline(summary: pd.DataFrame, conf: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "base rates": summary["base_rates"],
            "direction": summary["direction"].map(direction_label),
            # pooled T->A rows (templates bound to their tasks) have no std over templates
            "BiasAmp→ mean ± std": [
                format_value(m, None if pd.isna(sd) else sd)
                for m, sd in zip(summary["mean"], summary["std"])
            ],
            f"{conf:.0%} CI": [
                format_ci(lo, hi) for lo, hi in zip(summary["ci_low"], summary["ci_high"])
            ],
            "CI covers": [  # what a row's CI resamples: "both" are templates and tasks
                ("templates, tasks" if r == "both" else r) + (", counts" if b else "")
                for r, b in zip(summary["resample"], summary["base_resampled"])
            ],
            "templates": summary["n_templates"],
        }
    )


def _groups_section(by_group: pd.DataFrame, prov: Provenance, doc: dict) -> Section:
    table = pd.DataFrame(
        {
            "base rates": by_group["base_rates"],
            "direction": by_group["direction"].map(direction_label),
            "group": by_group["group"],
            f"BiasAmp→ [{prov.bootstrap.confidence:.0%} CI]": _with_ci(by_group, "mean"),
            "templates": by_group["n_templates"],
            "tasks": by_group["n_tasks"],
        }
    )
    return Section(
        "Groups of templates",
        table=table,
        bullets=tuple(f"`{g}`: {d}" for g, d in (prov.templates.groups or {}).items() if d),
        text="Each group is measured like the summary, on its own templates only "
        "(a task none of them covers is left out).",
        data=doc["by_group"],
    )


def _with_ci(frame: pd.DataFrame, column: str, ci: str = "ci_", **fmt) -> list[str]:
    """``value [low, high]`` of each row: ``column`` and the columns ``{ci}low``, ``{ci}high``."""
    ends = zip(frame[f"{ci}low"], frame[f"{ci}high"])
    return [format_value(v, ci=lh, **fmt) for v, lh in zip(frame[column], ends)]


def _top_rows(by_pair: pd.DataFrame, n: int = _N_TOP_PAIRS) -> pd.DataFrame:
    """The ``n`` largest |contributions| of each (source, direction) (different scales)."""
    if by_pair.empty:
        return by_pair
    groups = by_pair.groupby(["base_rates", "direction"], sort=False).ngroup()
    bp = by_pair.assign(_abs=by_pair["contribution"].abs(), _g=groups)
    bp = bp.sort_values(["_g", "_abs"], ascending=[True, False], kind="stable")
    return bp.groupby("_g", sort=False).head(n)


def _top_pairs(bp: pd.DataFrame) -> pd.DataFrame:
    """The largest contributions (:func:`_top_rows`) as a table."""
    if bp.empty:
        return pd.DataFrame()
    return pd.DataFrame(
        {
            "base rates": bp["base_rates"],
            "direction": bp["direction"].map(direction_label),
            "task": bp["task"],
            "attribute": bp["attribute"],
            # sign_supported: true / false where the counts were resampled, null elsewhere
            "association": [
                format_value(v, digits=0, sign=True)
                + (" (unsupported)" if pd.notna(s) and not s else "")
                for v, s in zip(bp["association"], bp["sign_supported"])
            ],
            "p_base": bp["p_base"].map(format_value),
            "p_model": bp["p_model"].map(format_value),
            "contribution [CI]": _with_ci(bp, "contribution", "contribution_ci_"),
        }
    )


def _audit_section(audit: pd.DataFrame) -> Section:
    if not audit.empty and "single_piece" in audit:
        audit = audit[~audit["single_piece"].astype(bool)]
    title = "Tokenisation audit"
    if audit.empty:
        return Section(title, empty="Every candidate is a single word piece for this model.")
    keep = [c for c in _AUDIT_COLUMNS if c in audit.columns]
    table = audit[keep].map(lambda v: " ".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
    return Section(
        title, intro="Candidates that are not a single word piece for this model:", table=table
    )


def _said_once(explanation: str, facts, after: str = "") -> tuple[str, ...]:
    """One bullet: the explanation once, then the facts of each (source, direction) briefly."""
    facts = list(facts)
    return (f"{explanation}: {'; '.join(facts)}.{after}",) if facts else ()


def _where(source, direction) -> str:
    return f"{source}, {direction_label(direction)}"


def _undefined_lines(result: ProbeResult) -> tuple[str, ...]:
    """The (source, direction) values that leave undefined cells out (one bullet)."""
    per = result.per_template
    if per.empty or "n_nan" not in per:
        return ()
    n_cells = len(set(zip(result.by_pair["task"], result.by_pair["attribute"])))
    summary = result.summary.set_index(["base_rates", "direction"])
    excluded = summary["n_tasks_excluded"].fillna(0).astype(int).to_dict()
    n_attr = len(set(result.by_pair["attribute"]))
    worst = per.groupby(["base_rates", "direction"], sort=False)["n_nan"].max()
    facts = []
    for (src, d), n in worst.items():
        n = int(n) - excluded.get((src, d), 0) * n_attr  # left-out tasks are told apart
        if n > 0:
            facts.append(f"{_where(src, d)}: {n} of {n_cells} cells")
    return _said_once(
        "Undefined (task, attribute) cells (an all-zero base row or column), left out of the value",
        facts,
    )


def _unavailable_lines(summary: pd.DataFrame, *tables) -> tuple[str, ...]:
    """Why an interval is ``n/a``: too few templates, or zero width in ``tables``."""
    degenerate = []
    for what, frame, low, high in tables:
        if frame.empty:
            continue
        n = sum(degenerate_ci(lo, hi) for lo, hi in zip(frame[low], frame[high]))
        if n:
            degenerate.append(f"{what}: {n} of {len(frame)}")
    bad = summary[summary["ci_low"].isna() | summary["ci_high"].isna()]
    lines = _said_once(
        "CI over templates shown as n/a because fewer than 2 templates give a value (a "
        "bootstrap over templates needs at least 2; the std is then 0 by construction)",
        (
            f"{_where(r.base_rates, r.direction)}: {int(r.n_templates)} template(s)"
            for r in bad.itertuples()
        ),
    )
    return lines + _said_once(
        "Intervals of zero width shown as n/a: nothing varied in their bootstrap (e.g. one "
        "template per task resampled within tasks, or two sources whose base rates are exact), "
        "so they would only repeat the value",
        degenerate,
    )


def _support_lines(result: ProbeResult) -> tuple[str, ...]:
    """Unsupported associations, notable base biases, tasks left out: a bullet each."""
    boot = result.provenance.bootstrap
    unsupported, biased, excluded = [], [], []
    n_tasks = len(set(result.by_pair["task"]))
    for r in result.summary.itertuples():
        where = _where(r.base_rates, r.direction)
        n = 0 if pd.isna(r.n_tasks_unsupported) else int(r.n_tasks_unsupported)
        if r.base_resampled and n > 0:
            unsupported.append(f"{where}: {n} of {n_tasks} tasks")
        bias, width = r.base_bias, r.ci_high - r.ci_low
        if r.base_resampled and pd.notna(bias) and abs(bias) >= NOTABLE_BIAS * width:
            biased.append(f"{where}: {format_value(bias, sign=True)}")
        if int(r.n_tasks_excluded or 0) > 0:
            excluded.append(f"{where}: {int(r.n_tasks_excluded)} of {n_tasks} tasks")
    return (
        _said_once(
            f"Associations not supported by the counts (the sign holds in fewer than "
            f"{boot.confidence:.0%} of the base resamples)",
            unsupported,
            " These cells are marked `sign_supported = false` in `by_pair.csv` and "
            "carry little evidence; the CI of a value with unsupported associations "
            "is indicative only.",
        )
        + _said_once(
            "Values shifted by the sampling error of the counts (on average over the "
            "base resamples)",
            biased,
            " The counts are too sparse for these values to be read at face value: "
            "a value measured against a noisy base is biased by about as much, and "
            "its CI is then not reliable.",
        )
        + _said_once(
            f"Tasks with fewer than {boot.min_base_count} co-occurrences, left out of the "
            "value (--min-base-count)",
            excluded,
        )
    )


def _base_rates_parts(prov: Provenance, summary: pd.DataFrame) -> tuple[list, tuple]:
    """(rows, notes) of the base-rates section: each source, its data and uncertainty."""
    resampled = set(
        summary.loc[summary["base_resampled"].fillna(False).astype(bool), "base_rates"].astype(str)
    )
    rows, notes = [], []
    for source, by_direction in prov.base_rates.items():
        bp = next(iter(by_direction.values()))  # what a source is does not vary by direction
        totals = bp.row_totals
        if totals:
            n = len(totals)
            none = sum(v == 0 for v in totals.values())
            little = sum(0 < v < LITTLE_DATA for v in totals.values())
            data = f"{none} of {n} tasks with no co-occurrence, {little} with 1-{LITTLE_DATA - 1}"
        else:
            data = "n/a (not counts)"
        rows.append(
            {
                "source": source,
                "kind": bp.kind or "n/a",
                "what it is": bp.about,
                "data per task": data,
                "uncertainty": (
                    "counts resampled in every CI" if source in resampled else "treated as exact"
                ),
            }
        )
        if bp.demonstration:
            kept = "?" if bp.n_kept is None else bp.n_kept
            notes.append(
                f"**`{source}` is a demonstration-size source** "
                f"({kept} counted sentences): its numbers show how the "
                "tool works and carry no weight as a base rate."
            )
    return rows, tuple(notes)


def _provenance_lines(p: Provenance) -> tuple[str, ...]:
    """Model and its weights, context, estimator, templates, base rates, versions."""
    m, s, tpl, c = p.model, p.scorer, p.templates, p.scorer.context
    lines = [
        f"model: `{m.name}` (revision: `{m.revision or 'default'}`"
        + (f", commit `{m.commit}`)" if m.commit else ")")
    ]
    if m.weights_sha256:  # the weight files the scores came from
        named = sorted(m.weights_sha256.items())
        more = len(named) - _N_WEIGHT_FILES
        lines.append(
            "weights sha256: "
            + ", ".join(f"`{name}` `{sha[:16]}…`" for name, sha in named[:_N_WEIGHT_FILES])
            + (f" and {more} more files (all in results.json)" if more > 0 else "")
        )
    lines.append(
        f"device / dtype: {s.device} / {s.dtype}; model type: "
        f"{m.model_type} LM; estimator (scoring): "
        f"`{s.estimator}`; compat: {f'`{p.compat}`' if p.compat else 'none'}; seed: {p.seed}"
    )
    if c is not None:  # a causal LM's context token and the rule that chose it
        line = f"context before each sentence: `{c.token}` ({c.rule})"
        if c.skipped:
            line += "; passed over as chat markers: " + ", ".join(f"`{t}`" for t in c.skipped)
        if c.chat_template:
            line += (
                "; a chat model probed as a plain LM (sentences as text, not in a chat turn): "
                "its numbers describe how it continues text, not its answers in a conversation"
            )
        lines.append(line)
    lines += [
        f"templates: `{tpl.name}` ({tpl.n_templates} templates, prompts sha256 "
        f"`{tpl.prompts_sha256[:16]}…`)",
        f"tasks: `{p.tasks.name}`; attributes: {', '.join(p.attributes)}",
    ]
    seen: dict[tuple, list[str]] = {}
    for source, by_direction in p.base_rates.items():
        for direction, b in by_direction.items():
            seen.setdefault((source, b.citation or b.name, b.file_sha256), []).append(
                direction_label(direction)
            )
    for (source, cite, sha), dirs in seen.items():
        lines.append(f"base rates `{source}` ({', '.join(dirs)}): {cite} (sha256 `{sha[:16]}…`)")
    lines.append("versions: " + ", ".join(f"{k} {val}" for k, val in sorted(p.versions.items())))
    lines.append(f"created: {p.timestamp}")
    return tuple(lines)


def _model_index(summary: list[dict], prov: Provenance) -> list[dict]:
    """The Hugging Face ``model-index``: a metric per source and direction."""
    templates, version = prov.templates.name, prov.versions.get("biasamp", "")
    metrics = []
    for row in summary:
        if row["mean"] is None:  # undefined: no place in the index (the card says why)
            continue
        direction, source = row["direction"], row["base_rates"]
        args = {k: row[k] for k in ("direction", "base_rates", "ci_low", "ci_high")}
        metrics.append(
            {
                "type": f"biasamp_{_SHORT[direction]}",
                "name": f"BiasAmp→ {direction_label(direction)} ({source})",
                "value": row["mean"],
                "config": source,
                "args": {**args, "confidence": prov.bootstrap.confidence},
            }
        )
    result = {
        "task": {
            "type": "fill-mask" if prov.model.model_type == "masked" else "text-generation",
            "name": "Directional bias amplification (BiasAmp→)",
        },
        "dataset": {
            "type": f"biasamp/{templates}",
            "name": f"biasamp templates {templates}",
            "config": templates,
        },
        "metrics": metrics,
        "source": {"name": f"biasamp {version}".strip(), "url": SOURCE_URL},
    }
    return [{"name": prov.model.name, "results": [result]}]
