"""The content of a report, computed once from a :class:`~biasamp.results.ProbeResult`.

:func:`build_sections` returns an ordered list of :class:`Section`; the Markdown, HTML,
model-card and JSON formatters only lay these out (none computes a table). Section texts
use inline Markdown (``**bold**``, ``*em*``, ```code```), which the HTML formatter renders
(:func:`~._format.markdown_html`). Every number and CI goes through
:func:`~._format.format_value` / :func:`~._format.format_ci` (``[low, high]``, ``n/a``).

Sections, in order (``key``: content; a note's bullet says its explanation once, then lists
the sources and directions it holds for)

- ``title``: the report title; ``text`` is the one-sentence description of the measurement.
- ``note``: a warning when the model was loaded with missing weights
  (``provenance.model.missing_weights``), then the free-text note of the run (each only
  when there is one).
- ``summary``: the headline table (one row per source and direction) and how to read it.
- ``groups``: the value per group of templates (e.g. WinoBias pro/anti, type 1/2; only when
  the templates have groups).
- ``undefined``: the sources and directions that leave undefined cells out (only when some
  do).
- ``unavailable``: why an interval shows as ``n/a``: the sources and directions whose CI over
  templates could not be computed (fewer than two templates give a value), and the intervals
  of zero width (nothing varied in their bootstrap), counted per table (only when there are
  some).
- ``support``: the sources and directions whose counts do not support the association of
  some tasks (its sign flips in the base resamples), whose value the counts' sampling error
  shifts notably, or whose tasks with too few counts were left out (``--min-base-count``;
  only when some are).
- ``base_rates``: what every source is (kind, description, data per task, how its
  uncertainty is treated), with a loud note for demonstration-size sources.
- ``plots``: the plot kinds and their titles (none when there are no (task, attribute) rows).
- ``contributions``: the largest contributions to the value.
- ``sign_agreement``: how often two sources agree on the sign of an association (no table
  with fewer than two sources).
- ``mass``: the raw probability mass the candidates cover (no table when not recorded).
- ``audit``: the candidates that are not a single word piece.
- ``caveats``: how to read the numbers.
- ``provenance``: model, data and versions behind the numbers.

``data`` holds the machine-readable content of a section (what ``report.json`` shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..results import ProbeResult, Provenance, jsonable
from ._format import degenerate_ci, direction_label, format_ci, format_value
from ._notes import (base_rates_section_parts, support_lines, unavailable_lines,
                     undefined_lines)
from ._plots import PLOT_KINDS, PLOT_TITLES
from ._provenance import measured_with, provenance_lines

__all__ = ["CAVEATS", "NOTE_KEYS", "SECTION_KEYS", "Section", "build_sections"]

#: Keys of the sections, in report order.
SECTION_KEYS = ("title", "note", "summary", "groups", "undefined", "unavailable", "support",
                "base_rates",
                "plots", "contributions", "sign_agreement", "mass", "audit", "caveats",
                "provenance")

#: Sections that are short notes (a bold title and bullets, shown only when they say something).
NOTE_KEYS = ("undefined", "unavailable", "support")

#: How to read the numbers (the model card shows the first three).
CAVEATS = (
    ("**The value depends on the base-rate source.** BiasAmp→ measures how much the model "
     "*amplifies* a base correlation; every row names the source it was measured against "
     "(uniform, Wikipedia co-occurrence counts, US labor statistics, ...). Different sources "
     "can even disagree on the sign of the association for the same occupation."),
    ("**T→A and A→T values are not comparable to each other.** T→A compares "
     "P(attribute | task) (a distribution over a few attributes), A→T compares "
     "P(task | attribute) (a distribution over all the tasks), so the A→T numbers are on a much "
     "smaller scale. Compare each direction only with itself (other models, other sources)."),
    ("Values are means over fill-in-the-blank templates; the spread (population std, bootstrap "
     "CI over templates) shows how much they depend on the wording of the template."),
    ("The model's probabilities are renormalised over the candidate words; the raw probability "
     "mass the candidates cover is reported with the results. Candidates that split into "
     "several word pieces are listed in the tokenisation audit."),
    ("The attributes are words (pronouns), not people's genders; a binary he/she probe says "
     "nothing about non-binary identities unless `they` is included."),
)

_SUMMARY_TEXT = ("Mean and population std (ddof=0) over templates; percentile bootstrap CI over "
                 "what its row's \"CI covers\" names (\"counts\": the sentences of a "
                 "count-based base-rate source, resampled jointly with the rest). A positive "
                 "value means the model amplifies the base correlation.")
#: what a summary row's CI resamples, by ``resample`` (the base counts are added per row)
_CI_COVERS = {"templates": "templates", "tasks": "tasks", "both": "templates, tasks"}
_N_TOP_PAIRS = 5
_MASS_TEXT = ("Share of the model's probability that the candidates cover before "
              "renormalisation: for a one-piece candidate, its probability at the mask; for a "
              "candidate of several pieces (T->A spans such as \"They are\", split "
              "occupations), the chain-rule probability of the whole span, which is much smaller "
              "than a one-position share, so these masses are small by construction and only "
              "comparable within one estimator; for `pll` they are sums of pseudo-likelihoods, "
              "not probabilities.")
_POOLED_TEXT = (" Templates bound to their own task (benchmark sentences such as Winogender or "
                "WinoBias) are pooled: T→A is measured on P(attribute | task) averaged over each "
                "task's own sentences (no std over templates), A→T on P(task | attribute) "
                "averaged over all sentences; the CI comes from a bootstrap that resamples "
                "templates within each task.")


def _groups_section(by_group: pd.DataFrame, prov: Provenance) -> Section:
    conf = prov.bootstrap.confidence
    descriptions = prov.templates.groups or {}
    table = pd.DataFrame({
        "base rates": by_group["base_rates"],
        "direction": by_group["direction"].map(direction_label),
        "group": by_group["group"],
        f"BiasAmp→ [{conf:.0%} CI]": [format_value(m, ci=(lo, hi)) for m, lo, hi in
                                      zip(by_group["mean"], by_group["ci_low"],
                                          by_group["ci_high"])],
        "templates": by_group["n_templates"], "tasks": by_group["n_tasks"]})
    bullets = tuple(f"`{g}`: {d}" for g, d in descriptions.items() if d)
    return Section("groups", "Groups of templates", table=table, bullets=bullets,
                   text="Each group is measured like the summary, on its own templates only "
                        "(a task none of them covers is left out).",
                   data=jsonable(by_group.to_dict(orient="records")))


@dataclass(frozen=True, eq=False)
class Section:
    """One part of a report.

    Attributes
    ----------
    key : str
        Which part (one of :data:`SECTION_KEYS`).
    title : str
        Its heading.
    intro : str
        A sentence before the table (Markdown report only, as in biasamp 0.1).
    table : DataFrame or None
        The table to show, formatted (strings); None when there is nothing to tabulate.
    empty : str
        Shown instead of the table when ``table`` is None.
    bullets : tuple of str
        Bullet lines.
    text : str
        A paragraph after the table.
    footer : str
        A pointer to the data files (Markdown report only).
    plots : tuple of (kind, title)
        The plots the section shows, where drawn.
    data : object
        The machine-readable content (JSON-ready), for ``report.json``.
    """

    key: str
    title: str = ""
    intro: str = ""
    table: pd.DataFrame | None = None
    empty: str = ""
    bullets: tuple[str, ...] = ()
    text: str = ""
    footer: str = ""
    plots: tuple[tuple[str, str], ...] = ()
    data: Any = None



def _headline(summary: pd.DataFrame, prov: Provenance) -> pd.DataFrame:
    conf = prov.bootstrap.confidence
    return pd.DataFrame({
        "base rates": summary["base_rates"],
        "direction": summary["direction"].map(direction_label),
        # pooled T->A rows (templates bound to their tasks) have no std over templates
        "BiasAmp→ mean ± std": [format_value(m, None if pd.isna(sd) else sd)
                                for m, sd in zip(summary["mean"], summary["std"])],
        f"{conf:.0%} CI": [format_ci(lo, hi) for lo, hi in zip(summary["ci_low"],
                                                               summary["ci_high"])],
        "CI covers": [_CI_COVERS.get(r, r) + (", counts" if b else "")
                      for r, b in zip(summary["resample"], summary["base_resampled"])],
        "templates": summary["n_templates"],
    })


def _any_unsupported(rows: pd.DataFrame) -> bool:
    """Whether a shown row's association is unsupported by the counts (marked "(unsupported)";
    its footer then says why): ``sign_supported`` false, not null (not measured)."""
    return bool(rows["sign_supported"].eq(False).any())


def _top_rows(by_pair: pd.DataFrame, n: int = _N_TOP_PAIRS) -> pd.DataFrame:
    """The rows of the ``n`` largest |contributions| of each (source, direction): the
    directions are on different scales, so one ranking across them would only show T->A."""
    if by_pair.empty:
        return by_pair
    bp = by_pair.assign(_abs=by_pair["contribution"].abs())
    bp = (bp.sort_values("_abs", ascending=False, kind="stable")
          .groupby(["base_rates", "direction"], sort=False).head(n))
    order = {k: i for i, k in enumerate(dict.fromkeys(zip(by_pair["base_rates"],
                                                          by_pair["direction"])))}
    bp = bp.assign(_g=[order[k] for k in zip(bp["base_rates"], bp["direction"])])
    return bp.sort_values(["_g", "_abs"], ascending=[True, False], kind="stable")


def _top_pairs(bp: pd.DataFrame) -> pd.DataFrame:
    """The largest contributions (:func:`_top_rows`) as a table."""
    if bp.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "base rates": bp["base_rates"], "direction": bp["direction"].map(direction_label),
        "task": bp["task"], "attribute": bp["attribute"],
        # sign_supported: true / false where the counts were resampled, null elsewhere
        "association": [format_value(v, digits=0, sign=True)
                        + (" (unsupported)" if pd.notna(s) and not s else "")
                        for v, s in zip(bp["association"], bp["sign_supported"])],
        "p_base": bp["p_base"].map(format_value),
        "p_model": bp["p_model"].map(format_value),
        "contribution [CI]": [format_value(c, ci=(lo, hi)) for c, lo, hi in
                              zip(bp["contribution"], bp["contribution_ci_low"],
                                  bp["contribution_ci_high"])],
    })


def _degenerate(*tables) -> list[tuple[str, str]]:
    """``(what, "n of m")`` for each ``(what, frame, low column, high column)`` with intervals
    of zero width (:func:`~._format.degenerate_ci`), shown as n/a."""
    out = []
    for what, frame, low, high in tables:
        if frame.empty:
            continue
        n = sum(degenerate_ci(lo, hi) for lo, hi in zip(frame[low], frame[high]))
        if n:
            out.append((what, f"{n} of {len(frame)}"))
    return out


def _agreement_section(result: ProbeResult, conf: float) -> Section:
    agree = result.sign_agreement
    table = None if agree.empty else pd.DataFrame({
        "direction": agree["direction"].map(direction_label), "source a": agree["source_a"],
        "source b": agree["source_b"],
        f"agreement [{conf:.0%} CI]": [
            format_value(v, ci=(lo, hi), digits=2)
            for v, lo, hi in zip(agree["agreement"], agree["ci_low"], agree["ci_high"])],
        "cells": agree["n_cells"]})
    return Section("sign_agreement", "Sign agreement of the association between sources",
                   intro=("Share of (task, attribute) cells on which two sources give the "
                          "association the same sign; the CI reflects the resampled base "
                          "counts (n/a when both sources are exact: nothing is resampled)."),
                   table=table, data=jsonable(agree.to_dict(orient="records")))


def _mass_section(mass: dict) -> Section:
    rows = [{"direction": direction_label(d), **{k: (f"{v:.3g}" if k != "n_prompts" else v)
                                        for k, v in m.items()}}
            for d, m in mass.items()]
    return Section("mass", "Raw candidate probability mass", intro=_MASS_TEXT,
                   table=pd.DataFrame(rows) if rows else None, data=mass)


def _audit_section(audit: pd.DataFrame) -> Section:
    if not audit.empty and "single_piece" in audit:
        audit = audit[~audit["single_piece"].astype(bool)]
    title = "Tokenisation audit"
    if audit.empty:
        return Section("audit", title,
                       empty="Every candidate is a single word piece for this model.")
    keep = [c for c in ("candidate", "pieces", "n_pieces", "first_piece",
                        "shares_first_piece_with") if c in audit.columns]
    table = audit[keep].map(lambda v: " ".join(map(str, v)) if isinstance(v, (list, tuple))
                            else v)
    return Section("audit", title,
                   intro="Candidates that are not a single word piece for this model:",
                   table=table)


def build_sections(result: ProbeResult) -> list[Section]:
    """The sections of the report of ``result``, in order (see the module docstring).

    Parameters
    ----------
    result : biasamp.results.ProbeResult
        A result, in memory or read by :meth:`~biasamp.results.ProbeResult.load` (both give
        the same sections: the mass and summary go through their JSON form).

    Returns
    -------
    list of Section
    """
    doc = result.to_json_dict()
    prov, mass = result.provenance, doc["mass"]
    sections = [Section("title", f"BiasAmp→ report: `{prov.model.name}`",
                        text=measured_with(prov))]
    missing = prov.model.missing_weights
    if missing:
        sections.append(Section("note", text=(
            f"WARNING: {len(missing)} weight(s) of this model were missing from its checkpoint "
            f"and initialised at random (--allow-missing-weights): {', '.join(missing[:6])}"
            f"{', ...' if len(missing) > 6 else ''}. These numbers do not describe a trained "
            "model.")))
    if prov.note:
        sections.append(Section("note", text=prov.note))
    pooled = "pooled" in set(result.summary.get("aggregation", ()))
    sections.append(Section("summary", "Summary", table=_headline(result.summary, prov),
                            text=_SUMMARY_TEXT + (_POOLED_TEXT if pooled else ""),
                            data=doc["summary"]))
    if not result.by_group.empty:
        sections.append(_groups_section(result.by_group, prov))
    undefined = undefined_lines(result)
    if undefined:
        sections.append(Section("undefined", "Undefined cells.", bullets=undefined))
    top = _top_rows(result.by_pair)
    unavailable = unavailable_lines(result.summary, degenerate=_degenerate(
        ("summary CIs", result.summary, "ci_low", "ci_high"),
        ("group CIs", result.by_group, "ci_low", "ci_high"),
        ("largest-contribution CIs", top, "contribution_ci_low", "contribution_ci_high"),
        ("sign-agreement CIs", result.sign_agreement, "ci_low", "ci_high")))
    if unavailable:
        sections.append(Section("unavailable", "Unavailable intervals.", bullets=unavailable))
    conf = prov.bootstrap.confidence
    support = support_lines(result, conf, prov.bootstrap.min_base_count)
    if support:
        sections.append(Section("support", "Evidence behind the base associations.",
                                bullets=support))
    rows, notes = base_rates_section_parts(prov, result.summary)
    sections.append(Section("base_rates", "Base rates", bullets=notes, data=rows,
                            table=pd.DataFrame(rows) if rows else None))
    kinds = PLOT_KINDS if not result.by_pair.empty else ()
    sections += [
        Section("plots", "Plots", plots=tuple((k, PLOT_TITLES[k]) for k in kinds)),
        Section("contributions", "Largest contributions",
                intro=(f"The {_N_TOP_PAIRS} largest |contributions| of each source and direction "
                       "(the directions are on different scales)."),
                table=_top_pairs(top),
                footer=(("\"(unsupported)\": the counts do not support the sign of this "
                         "association (see above). " if _any_unsupported(top) else "")
                        + "Full disaggregation: `by_pair.csv`.")),
        _agreement_section(result, conf),
        _mass_section(mass),
        _audit_section(result.audit),
        Section("caveats", "Caveats", bullets=CAVEATS),
        Section("provenance", "Provenance", bullets=provenance_lines(prov),
                data=doc["provenance"]),
    ]
    return sections
