"""The base-rate panel: one model, every base source, both directions, and the sign agreement
of the sources' associations; sized from its content (source names, number of sources)."""

from __future__ import annotations

import re

import numpy as np

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from ..results import ProbeResult
from ._format import direction_label
from ._plot_layout import figure, text_width

__all__ = ["base_rate_figure"]

_NAME_SIZE = 10   # source names (tick labels), points
_CELL_SIZE = 10   # agreement values in the cells, points
_TITLE_SIZE = 11  # panel titles, points
_BAR_WIDTH = 3.0  # inches of each bar panel


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
            i, j = sorted((sources.index(str(rec["source_a"])),
                           sources.index(str(rec["source_b"]))))
            mat[(i, j) if direction == ATTRIBUTE_TO_TASK else (j, i)] = rec["agreement"]
    return mat


def base_rate_figure(result: ProbeResult, sources: list[str], *, pooled: dict,
                     confidence: float):
    """The base-rate panel's figure (not saved).

    Parameters
    ----------
    result : ProbeResult
    sources : list of str
        The base-rate sources, in report order.
    pooled : dict
        Direction -> whether its values are pooled over bound templates (else the mean
        over templates).
    confidence : float
        Level of the bootstrap intervals.
    """
    from matplotlib.ticker import MaxNLocator

    summ = result.summary
    n = len(sources)
    wrapped = [_wrapped(s) for s in sources]
    name_w = text_width(sources, _NAME_SIZE)
    cell = max(0.75, text_width([ln for w in wrapped for ln in w.split("\n")], _NAME_SIZE) + 0.2)
    lines = max(w.count("\n") + 1 for w in wrapped)
    title = (f"sign agreement: share of (task,\nattribute) associations of the\nsame sign; "
             f"upper: {direction_label(ATTRIBUTE_TO_TASK)}, "
             f"lower: {direction_label(TASK_TO_ATTRIBUTE)}")
    heat_w = max(n * cell, text_width(title.split("\n"), _TITLE_SIZE))
    height = max(1.4, 0.55 * n) + 2.6 + 0.17 * (lines - 1)  # titles, labels: 2.6 in
    width = name_w + 2 * _BAR_WIDTH + name_w + heat_w + 1.6
    fig, axes = figure(width, height, f"Base-rate comparison ({result.model})", ncols=3,
                       gridspec_kw={"width_ratios": [_BAR_WIDTH, _BAR_WIDTH, heat_w]})
    axes = axes[0]
    y = np.arange(n)[::-1]
    for k, (ax, direction) in enumerate(zip(axes[:2], DIRECTIONS)):
        s = summ[summ["direction"] == direction].set_index("base_rates").reindex(sources)
        m = s["mean"].to_numpy(dtype=float)
        # a pooled value (bound templates) may sit a rounding error outside its interval
        lo = np.clip(m - s["ci_low"].to_numpy(dtype=float), 0.0, None)
        hi = np.clip(s["ci_high"].to_numpy(dtype=float) - m, 0.0, None)
        ax.barh(y, m, color="tab:blue", alpha=0.7, height=0.6)
        ax.errorbar(m, y, xerr=np.nan_to_num(np.vstack([lo, hi])), fmt="none", ecolor="k",
                    capsize=4, lw=1)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(sources if k == 0 else [], fontsize=_NAME_SIZE)
        ax.set_ylim(-0.6, n - 0.4)
        ax.tick_params(axis="x", labelsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # tick labels never run together
        value = "pooled over templates" if pooled[direction] else "mean over templates"
        ax.set_xlabel(f"BiasAmp\u2192, {value}\nbars: {confidence:.0%} bootstrap CI",
                      fontsize=10)
        ax.set_title(f"{direction_label(direction)} by base source", fontsize=_TITLE_SIZE)
    ax = axes[2]
    mat = _agreement(result, sources)
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(n):
        for j in range(n):
            if np.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center",
                        color="w" if mat[i, j] < 0.6 else "k", fontsize=_CELL_SIZE)
    ax.set_xticks(range(n))
    ax.set_xticklabels(wrapped, fontsize=_NAME_SIZE)
    ax.set_yticks(range(n))
    ax.set_yticklabels(sources, fontsize=_NAME_SIZE)
    ax.set_title(title, fontsize=_TITLE_SIZE)
    bar = fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03)
    bar.ax.tick_params(labelsize=9)
    return fig
