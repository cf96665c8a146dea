"""PNG plots of a probe result (matplotlib imported lazily, Agg backend).

long on purpose: the three figures of a report (Fig. 5, the forest plot, the base-rate
panel), each with its own helpers; what they share is in ``_plot_layout``.

:func:`plot_all` writes the PNGs of a :class:`~biasamp.results.ProbeResult` (in memory or
loaded from its folder), one figure function per kind; none needs a model or torch. Figures
are laid out by
``_plot_layout`` (constrained layout: nothing is cut off; labels placed without overlaps).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from ..results import ProbeResult
from ._format import direction_label
from ._plot_layout import (
    association_colors,
    association_entries,
    figure,
    freeze_layout,
    place_labels,
    save,
    text_width,
)

__all__ = ["PLOT_FILES", "PLOT_KINDS", "PLOT_TITLES", "plot_all"]

#: The plot kinds, in report order.
PLOT_KINDS = ("fig5", "forest", "base_rates")
#: File names of the plots, by kind.
PLOT_FILES = {
    "fig5": "fig5_p_attribute_given_task.png",
    "forest": "forest_delta.png",
    "base_rates": "base_rate_panel.png",
}
#: Titles of the plots in the reports, by kind.
PLOT_TITLES = {
    "fig5": "Model vs base P(attribute | task) (Fig. 5 analogue)",
    "forest": "Per-task \u0394 with bootstrap CIs",
    "base_rates": "Base-rate comparison",
}


def _by_pair(result: ProbeResult) -> pd.DataFrame:
    df = result.by_pair.copy()
    for col in ("task", "attribute", "base_rates", "direction"):
        df[col] = df[col].astype(str)
    return df


def _order(result: ProbeResult, key: str) -> list[str]:
    return list(dict.fromkeys(result.by_pair[key].astype(str)))


def _confidence(result: ProbeResult) -> float:
    """The confidence level of the result's bootstrap intervals."""
    return float(result.provenance.bootstrap.confidence)


def _aggregation(result: ProbeResult, source: str, direction: str) -> str:
    """``"templates"`` (mean over templates) or ``"pooled"`` (bound templates pooled per
    task), as the summary records it for (source, direction)."""
    s = result.summary
    rows = s[(s["base_rates"].astype(str) == source) & (s["direction"] == direction)]
    if "aggregation" not in rows or rows.empty:
        return "templates"
    return str(rows["aggregation"].iloc[0])


#: line styles of Fig. 5, drawn and explained in its legend with the same values
_DIAGONAL = {"color": "0.5", "lw": 1, "ls": "--"}
_PARITY = {"color": "tab:red", "lw": 0.8, "ls": ":"}
_MARGINAL = {"color": "tab:green", "lw": 1.1, "ls": "-."}

#: sizes of the base-rate panel
_NAME_SIZE = 10  # source names (tick labels), points
_CELL_SIZE = 10  # agreement values in the cells, points
_TITLE_SIZE = 11  # panel titles, points
_BAR_WIDTH = 3.0  # inches of each bar panel

#: tasks labelled per panel of Fig. 5 (the largest |model - base| deviations)
_N_LABELS = 8
#: half-width of the horizontal spread of the points of a panel whose base is one value
_SPREAD = 0.1


def _marginal(result: ProbeResult, source: str, attribute: str) -> float | None:
    """The base marginal P(attribute) of a source's T->A table (None for given signs)."""
    bp = result.provenance.base_rate(source, TASK_TO_ATTRIBUTE)
    if bp is None or bp.association_given or attribute not in bp.marginal:
        return None
    return float(bp.marginal[attribute])


def _spread(x: np.ndarray) -> np.ndarray | None:
    """Horizontal offsets for a panel whose defined bases are all one value (uniform): a
    deterministic low-discrepancy sequence in task order within ±``_SPREAD``; None when the
    bases differ."""
    finite = x[np.isfinite(x)]
    if finite.size < 2 or np.ptp(finite) > 1e-12:
        return None
    golden = (np.sqrt(5.0) - 1.0) / 2.0
    return ((np.arange(x.size) * golden) % 1.0 - 0.5) * 2.0 * _SPREAD


def _fig5_bars(s: pd.DataFrame, pooled: bool) -> np.ndarray:
    """Error bars (2, n) of Fig. 5: ± the std over templates, or for pooled (bound) sets the
    bootstrap CI of Δ = model − base placed at the point (p_base + CI of Δ)."""
    if not pooled:
        std = s["p_model_std"].to_numpy(dtype=float)
        return np.nan_to_num(np.vstack([std, std]))
    d = s["delta"].to_numpy(dtype=float)
    lo = d - s["delta_ci_low"].to_numpy(dtype=float)
    hi = s["delta_ci_high"].to_numpy(dtype=float) - d
    return np.clip(np.nan_to_num(np.vstack([lo, hi])), 0.0, None)  # rounding: never negative


def _labelled(shown: int, picked: int) -> str:
    return f"labelled: {shown} of the {picked} tasks furthest from model = base"


def _fig5_figure(result: ProbeResult):
    """The paper's Fig. 5 analogue: model vs base ``P(first attribute | task)``.

    One panel per base-rate source (T->A direction); with more than two attributes (three
    pronouns, or groups) a row of such panels per attribute (a small-multiples grid): x = the base source's
    ``P(a | task)``, y = the model's mean over templates (bars: population std over
    templates), or, for bound template sets, its value pooled over each task's templates
    (bars: the bootstrap CI of Δ placed at the point); the diagonal (no amplification), the
    line that decides the association, ``P(a | task) = P(a)`` (the base marginal; a task
    right of it is associated with ``a``), and the parity lines at ``1 / n_attributes``.
    Colours: the base's association. Where every task has the same base (uniform) the points
    are spread sideways, deterministically, so that their bars show. The tasks furthest from
    the diagonal are labelled where a label fits without overlapping another or a point.
    """
    df = _by_pair(result)
    attributes = _order(result, "attribute")
    # two attributes: the first says it all (P(second | task) = 1 - P(first | task)); more
    # (three pronouns, or groups): a row of panels per attribute, a small-multiples grid
    rows_of = attributes if len(attributes) > 2 else attributes[:1]
    t2a = df[df["direction"] == TASK_TO_ATTRIBUTE]
    sources = _order(result, "base_rates")
    grid = [
        [(src, t2a[(t2a["base_rates"] == src) & (t2a["attribute"] == a)]) for src in sources]
        for a in rows_of
    ]
    legends = [
        [_fig5_legend(result, src, s, attributes, attribute=a) for src, s in row]
        for a, row in zip(rows_of, grid)
    ]
    legend_h = 0.19 * max(len(h) for row in legends for h in row) + 0.15
    first = rows_of[0] if len(rows_of) == 1 else "attribute"
    fig, axes = figure(
        5.6 * len(sources),
        (6.6 + legend_h) * len(rows_of),
        f"P({first} | task): model vs base source ({result.model})",
        nrows=2 * len(rows_of),
        ncols=len(sources),
        gridspec_kw={"height_ratios": [6.0, legend_h] * len(rows_of)},
    )
    labels = []
    for r, (a, row, row_legends) in enumerate(zip(rows_of, grid, legends)):
        for ax, leg, (src, s), handles in zip(axes[2 * r], axes[2 * r + 1], row, row_legends):
            labels.append(_fig5_panel(ax, result, src=src, s=s, attributes=attributes, attribute=a))
            leg.axis("off")
            leg.legend(handles=handles, loc="upper center", fontsize=8, frameon=False)
    renderer = freeze_layout(fig)  # the title keeps its lines: only a count may change
    for ax, points, pick, names in labels:
        shown = place_labels(ax, renderer, points=points, picked=pick, names=names)
        ax.set_title(
            ax.get_title().replace(_labelled(len(pick), len(pick)), _labelled(shown, len(pick)), 1),
            fontsize=9,
        )
    return fig


def _shown(s: pd.DataFrame) -> np.ndarray:
    """Rows of a Fig. 5 panel that have a point (base and model defined)."""
    return np.isfinite(s["p_base"].to_numpy(dtype=float)) & np.isfinite(
        s["p_model"].to_numpy(dtype=float)
    )


def _fig5_legend(
    result: ProbeResult, src: str, s: pd.DataFrame, attributes, *, attribute: str
) -> list:
    """The legend entries of one Fig. 5 panel: every line, every colour drawn, the bars."""
    from matplotlib.lines import Line2D

    first, parity = attribute, 1.0 / len(attributes)
    handles = [
        Line2D([], [], **_DIAGONAL, label="model = base (no amplification)"),
        Line2D([], [], **_PARITY, label=f"parity: 1 / {len(attributes)} attributes = {parity:.2g}"),
    ]
    marginal = _marginal(result, src, first)
    if marginal is not None:
        handles.append(
            Line2D(
                [],
                [],
                **_MARGINAL,
                label=f"base P({first}) = {marginal:.3g}: tasks right of it are "
                f"associated with {first}",
            )
        )
    association = s["association"].to_numpy(dtype=float)[_shown(s)]
    handles += association_entries(association, first, attributes, undefined=False)
    bars = (
        f"{_confidence(result):.0%} bootstrap CI of \u0394 = model \u2212 base"
        if _aggregation(result, src, TASK_TO_ATTRIBUTE) == "pooled"
        else "± std over templates"
    )
    handles.append(
        Line2D([], [], color="0.6", marker="|", ls="", markersize=9, label=f"bars: {bars}")
    )
    return handles


def _fig5_panel(
    ax, result: ProbeResult, *, src: str, s: pd.DataFrame, attributes, attribute: str
) -> tuple:
    """Draw one source's Fig. 5 panel of ``attribute``; returns what :func:`place_labels`
    needs."""
    first, parity = attribute, 1.0 / len(attributes)
    shown = _shown(s)
    x = s["p_base"].to_numpy(dtype=float)[shown]
    y = s["p_model"].to_numpy(dtype=float)[shown]
    pooled = _aggregation(result, src, TASK_TO_ATTRIBUTE) == "pooled"
    offsets = _spread(x)
    xs = x if offsets is None else x + offsets
    ax.plot([0, 1], [0, 1], **_DIAGONAL, zorder=0.5)
    ax.axhline(parity, **_PARITY, zorder=0.4)
    ax.axvline(parity, **_PARITY, zorder=0.4)
    marginal = _marginal(result, src, first)
    if marginal is not None:
        ax.axvline(marginal, **_MARGINAL, zorder=0.6)
    if offsets is not None and abs(x[0] - parity) > 1e-9:  # model = base for every task
        ax.axhline(x[0], **_DIAGONAL, zorder=0.5)
    ax.errorbar(
        xs, y, yerr=_fig5_bars(s[shown], pooled), fmt="none", ecolor="0.6", lw=0.8, zorder=1.5
    )
    ax.scatter(
        xs, y, c=association_colors(s["association"].to_numpy(dtype=float)[shown]), s=22, zorder=2
    )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(f"base P({first} | task): {src}", fontsize=10)
    mean = "pooled over each task's templates" if pooled else "mean over templates"
    ax.set_ylabel(f"model P({first} | task), {mean}", fontsize=10)
    pick = list(np.argsort(-np.abs(y - x), kind="stable")[:_N_LABELS])
    notes = []
    if (~shown).any():
        notes.append(f"{int((~shown).sum())} task(s) without base data (all-zero row) not shown.")
    if offsets is not None:
        notes.append(
            f"Every task's base is {x[0]:.2g}: points spread ±{_SPREAD:g} sideways "
            f"(by task order) so that their bars show; read them against "
            f"y = {x[0]:.2g}."
        )
    ax.set_title(
        "\n".join([src, _labelled(len(pick), len(pick)), *textwrap.wrap(" ".join(notes), 78)]),
        fontsize=9,
    )
    return ax, np.column_stack([xs, y]), pick, s["task"].to_numpy()[shown][pick]


def _forest_figure(result: ProbeResult):
    """Per-task Δ (model − base) with bootstrap CIs: one row of two panels (A->T, T->A) per
    base-rate source and attribute. With two attributes, the first only: its T->A Δ is the
    second's with the sign flipped (both sum to 1 over the two), and the second's A->T Δ is in
    ``by_pair.csv``; with more (groups), every attribute, as no one of them tells the others.

    Δ is in the units of each direction (P(task | a) for A->T, P(a | task) for T->A),
    so the two panels have their own x axes. A task whose Δ is undefined (no base data)
    keeps its row, marked with a grey cross at the left edge.
    """
    from matplotlib.lines import Line2D

    df = _by_pair(result)
    attributes = _order(result, "attribute")
    each = attributes[:1] if len(attributes) == 2 else attributes
    first = attributes[0] if len(each) == 1 else "the panel's attribute"
    sources = _order(result, "base_rates")
    tasks = _order(result, "task")
    height = max(2.6, 0.21 * len(tasks) + 1.3)
    fig, axes = figure(
        11,
        height * len(sources) * len(each) + 1.1,
        f"Per-task \u0394 = model \u2212 base of {', '.join(each)}, with bootstrap CIs "
        f"({result.model})",
        nrows=len(sources) * len(each),
        ncols=2,
    )
    ypos = np.arange(len(tasks))[::-1]
    rows = [(source, a) for source in sources for a in each]
    shown = [
        _forest_row(row, df, source=source, first=a, tasks=tasks, ypos=ypos, named=len(each) > 1)
        for row, (source, a) in zip(axes, rows)
    ]
    association = np.concatenate([a for a, _ in shown])
    handles = association_entries(association, first, attributes, undefined=False)
    if any(u for _, u in shown):
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="x",
                color="0.35",
                label="undefined base: no \u0394 for this task",
            )
        )
    handles += [
        Line2D(
            [], [], color="0.4", lw=1, label=f"{_confidence(result):.0%} bootstrap CI of \u0394"
        ),
        Line2D([], [], color="0.3", lw=0.8, label="\u0394 = 0: model = base"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return fig


def _forest_row(axes, df, *, source, first, tasks, ypos, named) -> tuple[np.ndarray, int]:
    """Draw one source's two panels of attribute ``first`` (in the titles if ``named``);
    returns the associations drawn and how many rows are undefined."""
    from matplotlib.transforms import blended_transform_factory

    drawn, n_undefined = [], 0
    for ax, direction in zip(axes, DIRECTIONS):
        s = (
            df[
                (df["direction"] == direction)
                & (df["attribute"] == first)
                & (df["base_rates"] == source)
            ]
            .set_index("task")
            .reindex(tasks)
        )
        d = s["delta"].to_numpy(dtype=float)
        lo = s["delta_ci_low"].to_numpy(dtype=float)
        hi = s["delta_ci_high"].to_numpy(dtype=float)
        association = s["association"].to_numpy(dtype=float)
        defined = np.isfinite(d)
        ax.hlines(ypos, lo, hi, color="0.4", lw=1)
        ax.scatter(
            d[defined], ypos[defined], c=association_colors(association[defined]), s=18, zorder=3
        )
        drawn.append(association[defined])
        if not defined.all():
            edge = blended_transform_factory(ax.transAxes, ax.transData)
            ax.scatter(
                np.full(int((~defined).sum()), 0.025),
                ypos[~defined],
                marker="x",
                color="0.35",
                s=20,
                transform=edge,
                zorder=3,
            )
            n_undefined += int((~defined).sum())
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(ypos)
        ax.set_yticklabels(tasks, fontsize=8)
        ax.set_ylim(-0.8, len(tasks) - 0.2)
        for tick, ok in zip(ax.get_yticklabels(), defined):
            if not ok:
                tick.set_color("0.45")
        unit = f"P(task | {first})" if direction == ATTRIBUTE_TO_TASK else f"P({first} | task)"
        ax.set_xlabel(f"\u0394 = model \u2212 base of {unit}", fontsize=9)
        named_as = f", {first}" if named else ""
        ax.set_title(f"{direction_label(direction)} vs {source}{named_as}", fontsize=10)
    return np.concatenate(drawn), n_undefined


def _base_rate_figure(result: ProbeResult):
    """Same model, every base source, both directions (value, CI), plus sign agreement:
    horizontal bars (names read horizontally), the figure sized from the names and the
    number of sources."""
    from matplotlib.ticker import MaxNLocator

    summ = result.summary
    sources = list(dict.fromkeys(summ["base_rates"].astype(str)))
    pooled = {d: _aggregation(result, sources[0], d) == "pooled" for d in DIRECTIONS}
    confidence = _confidence(result)
    n = len(sources)
    wrapped = [_wrapped(s) for s in sources]
    name_w = text_width(sources, _NAME_SIZE)
    cell = max(0.75, text_width([ln for w in wrapped for ln in w.split("\n")], _NAME_SIZE) + 0.2)
    lines = max(w.count("\n") + 1 for w in wrapped)
    title = (
        f"sign agreement: share of (task,\nattribute) associations of the\nsame sign; "
        f"upper: {direction_label(ATTRIBUTE_TO_TASK)}, "
        f"lower: {direction_label(TASK_TO_ATTRIBUTE)}"
    )
    heat_w = max(n * cell, text_width(title.split("\n"), _TITLE_SIZE))
    height = max(1.4, 0.55 * n) + 2.6 + 0.17 * (lines - 1)  # titles, labels: 2.6 in
    width = name_w + 2 * _BAR_WIDTH + name_w + heat_w + 1.6
    fig, axes = figure(
        width,
        height,
        f"Base-rate comparison ({result.model})",
        ncols=3,
        gridspec_kw={"width_ratios": [_BAR_WIDTH, _BAR_WIDTH, heat_w]},
    )
    axes = axes[0]
    y = np.arange(n)[::-1]
    for k, (ax, direction) in enumerate(zip(axes[:2], DIRECTIONS)):
        s = summ[summ["direction"] == direction].set_index("base_rates").reindex(sources)
        m = s["mean"].to_numpy(dtype=float)
        # a pooled value (bound templates) may sit a rounding error outside its interval
        lo = np.clip(m - s["ci_low"].to_numpy(dtype=float), 0.0, None)
        hi = np.clip(s["ci_high"].to_numpy(dtype=float) - m, 0.0, None)
        ax.barh(y, m, color="tab:blue", alpha=0.7, height=0.6)
        ax.errorbar(
            m, y, xerr=np.nan_to_num(np.vstack([lo, hi])), fmt="none", ecolor="k", capsize=4, lw=1
        )
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(sources if k == 0 else [], fontsize=_NAME_SIZE)
        ax.set_ylim(-0.6, n - 0.4)
        ax.tick_params(axis="x", labelsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # tick labels never run together
        value = "pooled over templates" if pooled[direction] else "mean over templates"
        ax.set_xlabel(f"BiasAmp\u2192, {value}\nbars: {confidence:.0%} bootstrap CI", fontsize=10)
        ax.set_title(f"{direction_label(direction)} by base source", fontsize=_TITLE_SIZE)
    ax = axes[2]
    mat = _agreement(result, sources)
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(n):
        for j in range(n):
            if np.isfinite(mat[i, j]):
                ax.text(
                    j,
                    i,
                    f"{mat[i, j]:.2f}",
                    ha="center",
                    va="center",
                    color="w" if mat[i, j] < 0.6 else "k",
                    fontsize=_CELL_SIZE,
                )
    ax.set_xticks(range(n))
    ax.set_xticklabels(wrapped, fontsize=_NAME_SIZE)
    ax.set_yticks(range(n))
    ax.set_yticklabels(sources, fontsize=_NAME_SIZE)
    ax.set_title(title, fontsize=_TITLE_SIZE)
    bar = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03)
    bar.ax.tick_params(labelsize=9)
    return fig


def _wrapped(name: str, width: int = 12) -> str:
    """A source name broken after ``-``, ``:``, ``_`` or ``.`` into lines of about
    ``width`` characters (the agreement matrix's column labels stay horizontal)."""
    lines, line = [], ""
    for piece in re.findall(r"[^-:_.]+[-:_.]?|[-:_.]", name):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    return "\n".join([*lines, line])


def _agreement(result: ProbeResult, sources: list[str]) -> np.ndarray:
    """Sign agreement of each pair of sources: upper triangle A->T, lower T->A, 1 on the
    diagonal, NaN where the result has none."""
    agree = result.sign_agreement
    n = len(sources)
    mat = np.full((n, n), np.nan)
    np.fill_diagonal(mat, 1.0)
    for direction in DIRECTIONS:
        for rec in agree[agree["direction"] == direction].to_dict("records"):
            i, j = sorted(
                (sources.index(str(rec["source_a"])), sources.index(str(rec["source_b"])))
            )
            mat[(i, j) if direction == ATTRIBUTE_TO_TASK else (j, i)] = rec["agreement"]
    return mat


_FIGURES = {"fig5": _fig5_figure, "forest": _forest_figure, "base_rates": _base_rate_figure}


def plot_all(result: ProbeResult, out_dir, kinds=PLOT_KINDS) -> dict[str, Path]:
    """Write the plots of ``kinds`` (default: every kind) into ``out_dir``.

    Returns
    -------
    dict mapping kind to the written path, in :data:`PLOT_KINDS` order.
    """
    out_dir = Path(out_dir)
    return {
        kind: save(_FIGURES[kind](result), out_dir / PLOT_FILES[kind])
        for kind in PLOT_KINDS
        if kind in kinds
    }
