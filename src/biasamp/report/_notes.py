"""The notes of a report about what stands behind the numbers: undefined cells, unavailable
intervals, associations the base counts do not support, left-out tasks, and the base-rate
sources themselves (what they are, how much data, how their uncertainty is treated)."""

from __future__ import annotations

import pandas as pd

from ..results import ProbeResult, Provenance
from ._format import direction_label

__all__ = ["LITTLE_DATA", "NOTABLE_BIAS", "base_rates_section_parts", "support_lines",
           "unavailable_lines", "undefined_lines"]

#: counts behind a task below which its base data is called "little"
LITTLE_DATA = 10
#: a base bias at least this share of the CI's width is told in the report
NOTABLE_BIAS = 0.1



def undefined_lines(result: ProbeResult) -> tuple[str, ...]:
    """One line per (source, direction) whose value leaves undefined cells out."""
    per = result.per_template
    if per.empty or "n_nan" not in per:
        return ()
    n_cells = len(set(zip(result.by_pair["task"], result.by_pair["attribute"])))
    excluded = dict(zip(zip(result.summary["base_rates"], result.summary["direction"]),
                        result.summary["n_tasks_excluded"].fillna(0).astype(int)))
    n_attr = len(set(result.by_pair["attribute"]))
    worst = per.groupby(["base_rates", "direction"], sort=False)["n_nan"].max()
    lines = []
    for (src, d), n in worst.items():
        n = int(n) - excluded.get((src, d), 0) * n_attr  # left-out tasks are told apart
        if n > 0:
            lines.append(f"{src}, {direction_label(d)}: {n} of {n_cells} (task, attribute) "
                         "cells are undefined (all-zero base row or column) and left out of the value.")
    return tuple(lines)


def unavailable_lines(summary: pd.DataFrame) -> tuple[str, ...]:
    """One line per (source, direction) whose CI over templates could not be computed."""
    bad = summary[summary["ci_low"].isna() | summary["ci_high"].isna()]
    return tuple(f"{r.base_rates}, {direction_label(r.direction)}: {int(r.n_templates)} "
                 "template(s) give a value; a bootstrap CI over templates needs at least 2, so it is shown as "
                 "n/a (and the std is 0 by construction)." for r in bad.itertuples())


def support_lines(result: ProbeResult, confidence: float, min_base_count) -> tuple[str, ...]:
    """Per (source, direction): tasks whose association the counts do not support, a notable
    bias from the counts' sampling error, and tasks left out for too few counts."""
    lines = []
    n_tasks = len(set(result.by_pair["task"]))
    for r in result.summary.itertuples():
        where = f"{r.base_rates}, {direction_label(r.direction)}"
        unsupported = 0 if pd.isna(r.n_tasks_unsupported) else int(r.n_tasks_unsupported)
        if r.base_resampled and unsupported > 0:
            lines.append(
                f"{where}: the association of {unsupported} of {n_tasks} tasks is not "
                f"supported by the counts (its sign holds in fewer than {confidence:.0%} of the "
                "base resamples); these cells are marked `sign_supported = false` in "
                "`by_pair.csv` and carry little evidence; with unsupported associations the "
                "CI of this value is indicative only.")
        bias, width = r.base_bias, r.ci_high - r.ci_low
        if r.base_resampled and pd.notna(bias) and abs(bias) >= NOTABLE_BIAS * width:
            lines.append(
                f"{where}: the sampling error of the counts shifts this value by {bias:+.4f} "
                "on average over the base resamples: the counts are too sparse for it to be "
                "read at face value (a value measured against a noisy base is biased by about "
                "as much, and its CI is then not reliable).")
        if int(r.n_tasks_excluded or 0) > 0:
            lines.append(
                f"{where}: {int(r.n_tasks_excluded)} of {n_tasks} tasks have fewer than "
                f"{min_base_count} co-occurrences and are left out of the value "
                "(--min-base-count).")
    return tuple(lines)


def base_rates_section_parts(prov: Provenance, summary: pd.DataFrame
                             ) -> tuple[list, tuple]:
    """(rows, notes) of the base-rates section: what every source is, how much data stands
    behind it, how its uncertainty is treated in this run, and loud notes."""
    resampled = set(summary.loc[summary["base_resampled"].fillna(False).astype(bool),
                                "base_rates"].astype(str))
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
        rows.append({"source": source, "kind": bp.kind or "n/a",
                     "what it is": bp.about,
                     "data per task": data,
                     "uncertainty": ("counts resampled in every CI" if source in resampled
                                     else "treated as exact")})
        if bp.demonstration:
            kept = "?" if bp.n_kept is None else bp.n_kept
            notes.append(f"**`{source}` is a demonstration-size source** "
                         f"({kept} counted sentences): its numbers show how the "
                         "tool works and carry no weight as a base rate.")
    return rows, tuple(notes)
