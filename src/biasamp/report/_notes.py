"""The notes of a report about what stands behind the numbers: undefined cells, unavailable
intervals, associations the base counts do not support, left-out tasks, and the base-rate
sources themselves (what they are, how much data, how their uncertainty is treated)."""

from __future__ import annotations

import pandas as pd

from ..results import ProbeResult, Provenance
from ._format import direction_label, format_value

__all__ = ["LITTLE_DATA", "NOTABLE_BIAS", "base_rates_section_parts", "support_lines",
           "unavailable_lines", "undefined_lines"]

#: counts behind a task below which its base data is called "little"
LITTLE_DATA = 10
#: a base bias at least this share of the CI's width is told in the report
NOTABLE_BIAS = 0.1



def _said_once(explanation: str, facts, after: str = "") -> tuple[str, ...]:
    """One bullet: the explanation once, then the facts of each (source, direction) briefly."""
    facts = list(facts)
    return (f"{explanation}: {'; '.join(facts)}.{after}",) if facts else ()


def _where(source, direction) -> str:
    return f"{source}, {direction_label(direction)}"


def undefined_lines(result: ProbeResult) -> tuple[str, ...]:
    """The (source, direction) values that leave undefined cells out (one bullet)."""
    per = result.per_template
    if per.empty or "n_nan" not in per:
        return ()
    n_cells = len(set(zip(result.by_pair["task"], result.by_pair["attribute"])))
    excluded = dict(zip(zip(result.summary["base_rates"], result.summary["direction"]),
                        result.summary["n_tasks_excluded"].fillna(0).astype(int)))
    n_attr = len(set(result.by_pair["attribute"]))
    worst = per.groupby(["base_rates", "direction"], sort=False)["n_nan"].max()
    facts = []
    for (src, d), n in worst.items():
        n = int(n) - excluded.get((src, d), 0) * n_attr  # left-out tasks are told apart
        if n > 0:
            facts.append(f"{_where(src, d)}: {n} of {n_cells} cells")
    return _said_once("Undefined (task, attribute) cells (an all-zero base row or column), "
                      "left out of the value", facts)


def unavailable_lines(summary: pd.DataFrame, degenerate=()) -> tuple[str, ...]:
    """Why an interval is shown as ``n/a``: the (source, direction) values whose CI over
    templates could not be computed, and ``degenerate``: ``(what, n of m)`` for each table
    whose intervals have zero width (one bullet each)."""
    bad = summary[summary["ci_low"].isna() | summary["ci_high"].isna()]
    lines = _said_once(
        "CI over templates shown as n/a because fewer than 2 templates give a value (a "
        "bootstrap over templates needs at least 2; the std is then 0 by construction)",
        (f"{_where(r.base_rates, r.direction)}: {int(r.n_templates)} template(s)"
         for r in bad.itertuples()))
    return lines + _said_once(
        "Intervals of zero width shown as n/a: nothing varied in their bootstrap (e.g. one "
        "template per task resampled within tasks, or two sources whose base rates are exact), "
        "so they would only repeat the value", (f"{what}: {count}" for what, count in degenerate))


def support_lines(result: ProbeResult, confidence: float, min_base_count) -> tuple[str, ...]:
    """The (source, direction) values with tasks whose association the counts do not support,
    with a notable bias from the counts' sampling error, and with tasks left out for too few
    counts: one bullet each, its explanation said once."""
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
        _said_once(f"Associations not supported by the counts (the sign holds in fewer than "
                   f"{confidence:.0%} of the base resamples)", unsupported,
                   " These cells are marked `sign_supported = false` in `by_pair.csv` and "
                   "carry little evidence; the CI of a value with unsupported associations "
                   "is indicative only.")
        + _said_once("Values shifted by the sampling error of the counts (on average over the "
                     "base resamples)", biased,
                     " The counts are too sparse for these values to be read at face value: "
                     "a value measured against a noisy base is biased by about as much, and "
                     "its CI is then not reliable.")
        + _said_once(f"Tasks with fewer than {min_base_count} co-occurrences, left out of the "
                     "value (--min-base-count)", excluded))


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
